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
// episode's summary is stored, an entity query answered from the store's
// lookups, and the weighing of topics.

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

// EntityLookup is what a store looks up to answer an entity query.
type EntityLookup struct {
	// Facets lists the facets (their type and value) of the query's type
	// (any when unset) whose value is value or whose lookup key
	// (LookupKey) is one of lookups, by type and value.
	Facets func(value string, lookups []string) ([]clawledger.Facet, error)
	// Hits lists the episodes a facet occurs in, with its occurrence,
	// newest first (the query's agent, at most its limit).
	Hits func(typ clawledger.FacetType, value string) ([]*clawledger.EntityHit, error)
	// Topic lists the episodes among whose most frequent words a term is,
	// newest first (the query's agent, at most its limit).
	Topic func(term string) ([]*clawledger.EntityHit, error)
}

// Entity answers an entity query (clawledger.CortexStore.CortexEntity)
// from a store's lookups: the facets the value may name (by value, or by
// the key a file's base name or a URL's host is also found by) that
// MatchesEntity keeps, and the topic term, their episodes newest first
// (then by facet), at most the query's limit.
func Entity(q clawledger.EntityQuery, l EntityLookup) ([]*clawledger.EntityHit, error) {
	value := strings.TrimSpace(q.Value)
	if value == "" {
		return nil, nil
	}
	lookups := []string{strings.ToLower(value), strings.ToLower(path.Base(value)), LookupKey(clawledger.FacetURL, value)}
	cands, err := l.Facets(value, lookups)
	if err != nil {
		return nil, err
	}
	var hits []*clawledger.EntityHit
	for _, f := range cands {
		if !MatchesEntity(f.Type, f.Value, value) {
			continue
		}
		hs, err := l.Hits(f.Type, f.Value)
		if err != nil {
			return nil, err
		}
		hits = append(hits, hs...)
	}
	if q.Type == "" || q.Type == clawledger.FacetTopic {
		hs, err := l.Topic(strings.ToLower(value))
		if err != nil {
			return nil, err
		}
		hits = append(hits, hs...)
	}
	slices.SortStableFunc(hits, func(a, b *clawledger.EntityHit) int {
		return cmp.Or(cmp.Compare(b.Episode.EndMs, a.Episode.EndMs), cmp.Compare(b.Episode.ID, a.Episode.ID),
			cmp.Compare(a.Occurrence.Type, b.Occurrence.Type), cmp.Compare(a.Occurrence.Value, b.Occurrence.Value))
	})
	if q.Limit > 0 && len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits, nil
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
