//go:build race

package cli_test

// raceFlags build the programs as the test was built, so that go build reuses the
// packages the test run has compiled already.
var raceFlags = []string{"-race"}
