package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// PlanetLabStep is the sampling interval of the PlanetLab (CoMon) CPU traces: 5 minutes.
const PlanetLabStep = 5 * time.Minute

// Series is a background load over time: the fraction of a node's CPU that other
// applications use, as a step function — Values[i] holds from i×Step to (i+1)×Step,
// and the series repeats after its end (a day's trace replays every day). It models the
// FGM paper's "cloud" environment, where other applications share the servers.
type Series struct {
	// Name identifies the series (the file's base name for loaded ones).
	Name string
	// Step is the time each value holds.
	Step time.Duration
	// Values are fractions in [0, 1].
	Values []float64
}

// Period is the time after which the series repeats: len(Values) × Step.
func (s Series) Period() time.Duration { return time.Duration(len(s.Values)) * s.Step }

// At returns the value in force at time t (t ≥ 0; negative t counts as 0), repeating
// the series after its end; 0 for an empty series or a non-positive Step.
func (s Series) At(t time.Duration) float64 {
	if len(s.Values) == 0 || s.Step <= 0 {
		return 0
	}
	if t < 0 {
		t = 0
	}
	return s.Values[int((t/s.Step)%time.Duration(len(s.Values)))]
}

// Mean returns the average of the values (0 for an empty series).
func (s Series) Mean() float64 {
	if len(s.Values) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range s.Values {
		sum += v
	}
	return sum / float64(len(s.Values))
}

// ParsePlanetLab reads a PlanetLab CPU trace in the CloudSim format: one CPU
// utilisation percentage a line, sampled every PlanetLabStep. Values are numbers in
// [0, 100] (the files hold integers; decimals are accepted as CloudSim accepts them)
// and are returned as fractions (divided by 100). Blank lines, lines starting with '#'
// (CloudSim Plus' join.sh writes such a comment), a trailing '\r' and a UTF-8
// byte-order mark at the start are skipped.
//
// name names the input in errors and in the series: a malformed line gives a
// *ParseError "name:line: ..." wrapping ErrSyntax (not a number, a line over 1 MiB) or
// ErrInvalidValue (outside [0, 100]); an input without values gives one wrapping
// ErrEmpty.
func ParsePlanetLab(r io.Reader, name string) (Series, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	s := Series{Name: name, Step: PlanetLabStep, Values: make([]float64, 0, 288)}
	line := 0
	start := true // no line but blank ones read yet
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(trimLine(sc.Bytes(), start))
		if len(b) == 0 {
			continue
		}
		start = false
		if b[0] == '#' {
			continue
		}
		var v float64
		if n, err := parseBytes(b); err == nil {
			v = float64(n)
		} else if x, ferr := strconv.ParseFloat(string(b), 64); ferr == nil || errors.Is(ferr, strconv.ErrRange) {
			v = x
		} else {
			return Series{}, lineErr(name, line, string(b), fmt.Errorf("%w: not a number", ErrSyntax))
		}
		if math.IsNaN(v) {
			return Series{}, lineErr(name, line, string(b), fmt.Errorf("%w: not a number", ErrSyntax))
		}
		if v < 0 || v > 100 {
			return Series{}, lineErr(name, line, string(b), fmt.Errorf("%w: CPU %% outside [0, 100]", ErrInvalidValue))
		}
		s.Values = append(s.Values, v/100)
	}
	if err := sc.Err(); err != nil {
		return Series{}, scanErr(name, line+1, err)
	}
	if len(s.Values) == 0 {
		return Series{}, lineErr(name, line, "", fmt.Errorf("%w: no values", ErrEmpty))
	}
	return s, nil
}

// LoadPlanetLab reads the PlanetLab trace file at path (see ParsePlanetLab); errors
// name the path, and the series is named by the file's base name.
func LoadPlanetLab(path string) (Series, error) {
	s, err := load(path, ParsePlanetLab)
	if err != nil {
		return Series{}, err
	}
	s.Name = filepath.Base(path)
	return s, nil
}

// LoadPlanetLabDir reads every trace in dir (one directory of the PlanetLab data set,
// e.g. planetlab/20110303): the regular files, in name order, skipping names that
// start with '.' and README files. It stops at the first malformed file, with that
// file's error. A directory without traces gives an error wrapping ErrEmpty.
func LoadPlanetLabDir(dir string) ([]Series, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	var out []Series
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || strings.HasPrefix(strings.ToUpper(name), "README") {
			continue
		}
		s, err := LoadPlanetLab(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fieldErr("dir "+dir, "no trace files", ErrEmpty)
	}
	return out, nil
}
