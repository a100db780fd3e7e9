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

// BenchmarkSecretsShort masks short texts holding no secret (paths and
// commands, as the cortex masks its facets).
func BenchmarkSecretsShort(b *testing.B) {
	texts := []string{"/home/demo/projects/atlas/web/src/App.tsx", "go test ./billing/...", "curl -sS https://stripe.com/docs/api/invoices",
		"Done with the invoice stripe; see billing/invoice.go for more.", "/Users/Dana/Library/Caches/Thing.json"}
	for i := 0; i < b.N; i++ {
		for _, s := range texts {
			Secrets(s)
		}
	}
}
