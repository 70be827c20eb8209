package plugin_test

import (
	"math"
	"strings"
	"testing"

	apiresource "k8s.io/apimachinery/pkg/api/resource"

	"github.com/finegrain/finegrain/resource"
)

// FuzzQuantityAgreesWithKubernetes checks that the library reads a quantity in text
// (resource.Schema.Parse) as the plugin converts a pod's Kubernetes quantity: CPU as
// Quantity.MilliValue, memory as Quantity.Value, both rounding up; and that what the
// library writes (resource.Schema.Format) is a Kubernetes quantity of the same value.
//
// The library refuses on purpose what Kubernetes accepts but a scheduler cannot hold:
// negative amounts, amounts beyond int64 in base units, and a number without a digit
// ("+", "."), which Kubernetes reads as zero. Text with a long exponent is skipped:
// Kubernetes takes too long over "1e99999999".
func FuzzQuantityAgreesWithKubernetes(f *testing.F) {
	for _, s := range []string{"500m", "2", "1.5", "16Gi", "0.5Gi", "1e3", "1E3", "0.1m", "1.", ".5", "+3", "-0", "-1",
		"1E", "1n", "1u", "1e-3", "1e+3", "007", "0.0001", "1.1Gi", "1536Mi", "12e-1", "9223372036854775807", "8Ei", "", "+", ".", "1K", "2 Gi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if i := strings.IndexAny(text, "eE"); i >= 0 && len(text)-i > 4 {
			return
		}
		q, kerr := apiresource.ParseQuantity(text)
		cpu, cerr := resource.CPU.ParseAmount(text)
		mem, merr := resource.Memory.ParseAmount(text)
		if kerr != nil {
			if cerr == nil || merr == nil {
				t.Fatalf("%q: Kubernetes refuses it (%v), the library reads cpu %d, %v and memory %d, %v", text, kerr, cpu, cerr, mem, merr)
			}
			return
		}
		if !hasDigit(text) || q.Sign() < 0 {
			return
		}
		if q.CmpInt64(math.MaxInt64/1000) <= 0 {
			if cerr != nil || cpu != q.MilliValue() {
				t.Fatalf("%q: cpu %d, %v; Kubernetes' MilliValue %d", text, cpu, cerr, q.MilliValue())
			}
			out := resource.CPU.FormatAmount(cpu)
			if back, err := apiresource.ParseQuantity(out); err != nil || back.MilliValue() != cpu {
				t.Fatalf("%q: cpu %d written %q, which Kubernetes reads as %d millicores, %v", text, cpu, out, back.MilliValue(), err)
			}
		}
		if q.CmpInt64(math.MaxInt64/2) <= 0 {
			if merr != nil || mem != q.Value() {
				t.Fatalf("%q: memory %d, %v; Kubernetes' Value %d", text, mem, merr, q.Value())
			}
			out := resource.Memory.FormatAmount(mem)
			if back, err := apiresource.ParseQuantity(out); err != nil || back.Value() != mem {
				t.Fatalf("%q: memory %d written %q, which Kubernetes reads as %d, %v", text, mem, out, back.Value(), err)
			}
		}
	})
}

// hasDigit reports whether the number before the suffix has a digit.
func hasDigit(s string) bool {
	s = strings.TrimLeft(s, "+-")
	for i := 0; i < len(s) && (s[i] == '.' || '0' <= s[i] && s[i] <= '9'); i++ {
		if s[i] != '.' {
			return true
		}
	}
	return false
}
