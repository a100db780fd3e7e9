package search

import "github.com/clawledger/clawledger"

// The search index's data types live in the module root, beside the
// SearchIndex interface every backend implements; the search package
// knows them by these names.
type (
	Parsed       = clawledger.SearchQuery
	Term         = clawledger.SearchTerm
	Filter       = clawledger.SearchFilter
	Doc          = clawledger.SearchDoc
	Chunk        = clawledger.Chunk
	HitInfo      = clawledger.ChunkHit
	LexicalMatch = clawledger.LexicalMatch
	TermCount    = clawledger.DocFrequency
	Corpus       = clawledger.Corpus
	VectorMeta   = clawledger.VectorMeta
	PendingChunk = clawledger.PendingChunk
)
