//go:build cgo && sqlite_fts5

package sqlitedriver

// TermFreqs is empty: the cgo driver has no auxiliary function of
// clawledger's (see termfreqs.go); the store reads and tokenizes each
// match's text instead.
var TermFreqs string
