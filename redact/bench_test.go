package redact

import (
	"strings"
	"testing"
)

// BenchmarkAll masks a 16 KB tool output holding no secret: the common case.
func BenchmarkAll(b *testing.B) {
	text := strings.Repeat("The build of service 42 finished in 3.2s; see build/log-2026.txt for details, exit code 0.\n", 180)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		All(text)
	}
}
