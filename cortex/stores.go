package cortex

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
)

// What every cortex store computes alike, outside its queries: how an
// episode's summary is stored, the keys an entity is looked up by, the
// order of entity hits, and the weighing of topics.

// SummaryJSON is an episode summary as stored (empty lists as []).
func SummaryJSON(s clawledger.EpisodeSummary) string {
	s.FilesRead, s.FilesModified, s.Commands = nonNil(s.FilesRead), nonNil(s.FilesModified), nonNil(s.Commands)
	s.URLs, s.Errors = nonNil(s.URLs), nonNil(s.Errors)
	b, _ := json.Marshal(s)
	return string(b)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// SummaryHash is the sha256 of the text an episode's embedding is made
// from: a changed summary needs a new vector.
func SummaryHash(ep *clawledger.Episode) []byte {
	h := sha256.Sum256([]byte(ep.SummaryText()))
	return h[:]
}

// EntityLookups are the lookup keys (LookupKey) of the facets an entity
// query's value may name: by value, or by the key a file (base name) or a
// URL (host) is also found by. A candidate facet is one when
// MatchesEntity says so.
func EntityLookups(value string) []string {
	return []string{strings.ToLower(value), strings.ToLower(path.Base(value)), LookupKey(clawledger.FacetURL, value)}
}

// SortHits orders entity hits newest episode first (then by facet) and
// applies a limit (0: none).
func SortHits(hits []*clawledger.EntityHit, limit int) []*clawledger.EntityHit {
	slices.SortStableFunc(hits, func(a, b *clawledger.EntityHit) int {
		return cmp.Or(cmp.Compare(b.Episode.EndMs, a.Episode.EndMs), cmp.Compare(b.Episode.ID, a.Episode.ID),
			cmp.Compare(a.Occurrence.Type, b.Occurrence.Type), cmp.Compare(a.Occurrence.Value, b.Occurrence.Value))
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// RankTopics weighs topic facets (a term's total frequency in Count, the
// episodes it is among the most frequent words of in Episodes) against
// the episodes there are: sum of tf times ln((1 + N) / (1 + df)), highest
// first (then by term), the top ones (0: all), with the confidence of
// each the ratio of its weight to the highest.
func RankTopics(facets []*clawledger.Facet, episodes int64, top int) []*clawledger.Facet {
	score := func(x *clawledger.Facet) float64 {
		return float64(x.Count) * math.Log(float64(1+episodes)/float64(1+x.Episodes))
	}
	slices.SortFunc(facets, func(a, b *clawledger.Facet) int {
		if sa, sb := score(a), score(b); sa != sb {
			if sa > sb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Value, b.Value)
	})
	if top > 0 && len(facets) > top {
		facets = facets[:top]
	}
	if len(facets) > 0 && score(facets[0]) > 0 {
		best := score(facets[0])
		for _, x := range facets {
			x.Confidence = math.Round(max(score(x), 0)/best*1000) / 1000
		}
	}
	return facets
}
