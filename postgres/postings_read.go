package postgres

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
)

// A search's newest matches from the postings: the sealed ranges' rows
// of the query's words, newest range first, decoded and matched here; the
// chunks of the ranges not sealed yet through the word index, their
// recency buckets ANDed in (a few ranges at most: the newest, and any a
// writer still fills). First, in one round trip, the ranges sealed, the
// newest chunk and how many postings each word has in each range; then
// as many ranges as those counts say hold the window (and a fifth more:
// a phrase or AND matches fewer than its words), widened as
// newestMatches widens its buckets when they come short. All in one
// read-only snapshot, so the postings, their tombstones and the ranges
// sealed agree.

// usePostings turns the postings off (tests of the word index path).
var usePostings = true

// maxTail is how many ids of ranges not sealed a search through the
// postings reads through the word index; with more (the postings being
// built, a ledger just migrated) it reads them all there (newestMatches).
const maxTail = 4 << 13

// postingsHook, in tests, learns each search the postings answered and
// the ranges each of its passes read.
var postingsHook func(tsquery string, ranges []int64)

// postingsAnswer reports whether the postings can answer a search with
// filter f: the postings hold no agent, role, kind, time or source, and
// every host's chunks.
func (db *DB) postingsAnswer(f *clawledger.SearchFilter) bool {
	return usePostings && db.only == 0 && f.AgentID == "" && f.Role == "" && f.Source == "" &&
		f.Since == 0 && f.Until == 0 && f.SourceIDs == nil
}

// fromPostings returns up to want matches of q (rendered as expr) newest
// first, ok false when the postings cannot answer (their ranges not
// sealed hold too many ids); snap, when not nil, gets the corpus totals of
// its snapshot (LexicalSnapshot), ok or not.
func (db *DB) fromPostings(ctx context.Context, pq *postingQuery, expr string, f *clawledger.SearchFilter, want int,
	text *[]int64, snap *clawledger.Corpus) (out []clawledger.LexicalMatch, ok bool, err error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	defer conn.Release()
	done := false
	defer func() {
		if !done {
			conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`)
		}
	}()
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	// each statement planned once per connection (readPool.generic): they
	// read by key, and the word index's read of the ranges not sealed by
	// both its columns (the word's and the buckets' entries ANDed) whatever
	// the word; planned for their values they cost a rare word's search 0.3 ms
	b.Queue(`SET LOCAL plan_cache_mode = force_generic_plan`)
	var s *postingsState
	var newest, chunks, tokens int64
	// with the corpus totals, which a first page's snapshot takes from here,
	// and the search layer's settings, which check the embedder's setting
	// the search was begun with (metacache.go)
	b.Queue(`SELECT shift, sealed_below, legacy_end, ARRAY(SELECT blk::bigint FROM search_sealed ORDER BY blk),
		(SELECT coalesce(max(id), 0) FROM search_chunks), t.chunks, t.tokens, ` + metaColumns + ` FROM search_postings_state,
		(SELECT coalesce(sum(chunks), 0)::bigint AS chunks, coalesce(sum(tokens), 0)::bigint AS tokens FROM search_stats) t`).
		QueryRow(func(r pgx.Row) (err error) {
			s = &postingsState{}
			var keys, values []string
			if err := r.Scan(&s.shift, &s.sealedBelow, &s.legacyEnd, &s.sealed, &newest, &chunks, &tokens, &keys, &values); err != nil {
				return err
			}
			db.meta.saw(keys, values)
			return nil
		})
	// each positive word's postings by range (the index holds n)
	positive := pq.words[:len(pq.k.lexemes)]
	counts := map[int64][]int{} // by range, each word's
	b.Queue(`SELECT lexeme, blk, n FROM search_postings WHERE lexeme = ANY($1)`, positive).Query(func(r pgx.Rows) error {
		var w string
		var blk int64
		var n int
		_, err := pgx.ForEachRow(r, []any{&w, &blk, &n}, func() error {
			ns := counts[blk]
			if ns == nil {
				ns = make([]int, len(pq.words))
				counts[blk] = ns
			}
			ns[slices.Index(positive, w)] = n
			return nil
		})
		return err
	})
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return nil, false, err
	}
	if snap != nil {
		*snap = corpus(chunks, tokens, newest)
	}
	if f.MaxID > 0 {
		newest = min(newest, f.MaxID)
	}
	size := int64(1) << s.shift
	var tail []int64 // the ranges not sealed, newest first
	for blk := newest >> s.shift; blk >= s.sealedBelow; blk-- {
		if !s.isSealed(blk) {
			tail = append(tail, blk)
		}
	}
	if int64(len(tail))*size > maxTail {
		return nil, false, nil
	}
	var sealed []int64 // the sealed ranges the words are in, newest first
	for blk := range counts {
		if blk <= newest>>s.shift && s.isSealed(blk) && pq.bound(counts[blk]) > 0 {
			sealed = append(sealed, blk)
		}
	}
	slices.SortFunc(sealed, func(a, b int64) int { return cmp.Compare(b, a) })

	var hits map[int64]*clawledger.ChunkHit // a rare query's, by chunk
	m := newRangeMatcher(pq, int(size))
	var found []clawledger.LexicalMatch // from the postings, newest first
	var fromTail []clawledger.LexicalMatch
	k := pq.k
	scan := k.scanner(text)
	next, pass := 0, 0 // the next sealed range to read; the pass
	// a pass reads ranges until their bound is ratio times the matches
	// still needed: a fifth more at first, then by the last pass's yield
	need, ratio := want, 1.2
	for {
		// the ranges whose postings bound the matches still needed
		var read []int64
		bound := 0
		for next < len(sealed) && float64(bound) < ratio*float64(need) {
			read = append(read, sealed[next])
			bound += pq.bound(counts[sealed[next]])
			next++
		}
		if postingsHook != nil {
			postingsHook(expr, read)
		}
		b := &pgx.Batch{}
		if pass == 0 && len(tail) <= 1 && (s.sealedBelow > 0 || len(s.sealed) > 0) && rare(pq, counts) {
			// a rare query's matches with their hits, through the word index
			// (before enable_indexscan is off: the join reads sources by key)
			hits = map[int64]*clawledger.ChunkHit{}
			b.Queue(hitsSQL+` WHERE c.words @@ $1::tsquery LIMIT `+strconv.Itoa(rareHits), expr).
				Query(func(r pgx.Rows) error { return scanHits(r, hits) })
		}
		if pass == 0 && len(tail) > 0 {
			var p params
			cond := tailSQL(tail, s.shift, f.MaxID, &p)
			query := `SELECT ` + k.cols(&p) + ` FROM search_chunks c WHERE c.words @@ ` + p.add(expr) + `::tsquery` + cond +
				` ORDER BY c.id DESC LIMIT ` + p.add(want)
			b.Queue(`SET LOCAL enable_indexscan = off`)
			b.Queue(query, p.args...).Query(func(r pgx.Rows) error {
				for r.Next() {
					mt, err := scan(r)
					if err != nil {
						return err
					}
					fromTail = append(fromTail, mt)
				}
				return r.Err()
			})
		}
		views := map[int64][]*postingView{}
		var dead []int64
		if len(read) > 0 {
			var phrased []string
			for w, ok := range pq.phrase {
				if ok {
					phrased = append(phrased, pq.words[w])
				}
			}
			// the index descends once per word, to the ranges' span; blk = ANY
			// in its condition too would be a descent per word and range
			// (PostgreSQL 15), 2,200 pages for a phrase of 6 bigrams
			b.Queue(`SELECT lexeme, blk, n, ids, tfs, lens, CASE WHEN lexeme = ANY($3) THEN pos END FROM search_postings
				WHERE lexeme = ANY($1) AND blk >= $4 AND blk <= $5 AND blk + 0 = ANY($2)`,
				pq.words, read, phrased, read[len(read)-1], read[0]).Query(func(r pgx.Rows) error {
				for r.Next() {
					var w string
					var blk int64
					var n int
					var ids, tfs, lens, pos []byte
					if err := r.Scan(&w, &blk, &n, &ids, &tfs, &lens, &pos); err != nil {
						return err
					}
					v, err := newPostingView(blk*size, n, ids, tfs, lens, pos)
					if err != nil {
						return err
					}
					if pq.phrase[slices.Index(pq.words, w)] && pos == nil {
						return errBadPostings
					}
					vs := views[blk]
					if vs == nil {
						vs = make([]*postingView, len(pq.words))
						views[blk] = vs
					}
					vs[slices.Index(pq.words, w)] = v
				}
				return r.Err()
			})
			lo, hi := read[len(read)-1]*size, (read[0]+1)*size
			b.Queue(`SELECT id FROM search_dead WHERE id >= $1 AND id < $2`, lo, hi).Query(func(r pgx.Rows) error {
				var err error
				dead, err = pgx.CollectRows(r, pgx.RowTo[int64])
				return err
			})
		}
		last := next == len(sealed)
		if last {
			b.Queue(`COMMIT`)
		}
		if b.Len() > 0 {
			if err := conn.SendBatch(ctx, b).Close(); err != nil {
				return nil, false, err
			}
		}
		done = last
		had := len(found)
		slices.Sort(dead)
		isDead := func(id int64) bool { _, ok := slices.BinarySearch(dead, id); return ok }
		for _, blk := range read {
			if vs := views[blk]; vs != nil {
				found = m.match(blk*size, vs, isDead, f.MaxID, found, text)
			}
		}
		// the newest want of both are known down to the oldest range read
		floor := int64(0)
		if !last {
			floor = sealed[next-1] * size
		}
		have := len(found)
		for _, t := range fromTail {
			if t.ID >= floor {
				have++
			}
		}
		if have >= want || last {
			break
		}
		need = want - have
		ratio = 1.2 * float64(bound) / float64(max(len(found)-had, 1))
		if len(found) == had {
			ratio = 4 * max(ratio, 1.2)
		}
		pass++
	}
	if !done {
		if _, err := conn.Exec(ctx, `COMMIT`); err != nil {
			return nil, false, err
		}
		done = true
	}
	out = append(fromTail, found...)
	slices.SortFunc(out, func(a, b clawledger.LexicalMatch) int { return cmp.Compare(b.ID, a.ID) })
	out = out[:min(len(out), want)]
	for i := range out {
		out[i].Hit = hits[out[i].ID]
	}
	return out, true, nil
}

// rareHits is how many postings of a query (the sum of its bounds over
// the ranges sealed) make it rare: its search reads its matches' hits
// with them, in the postings' second round trip, so the engine does not
// ask Hits in a round trip of its own (LexicalMatch.Hit); the word index
// gives at most as many (a word rare in the ranges sealed may be common
// in the range not sealed yet, the newest: the rest are read by Hits;
// with more ranges not sealed, or none sealed, the counts say nothing).
const rareHits = 64

// rare reports whether pq's postings per range (counts) make it rare.
func rare(pq *postingQuery, counts map[int64][]int) bool {
	n := 0
	for _, ns := range counts {
		if n += pq.bound(ns); n > rareHits {
			return false
		}
	}
	return true
}

// tailSQL is the condition on search_chunks c that keeps the chunks of
// the ranges listed (newest first) and no newer than maxID (0: any): their
// recency buckets, for the word index to read (migration 00012), and
// their ids.
func tailSQL(ranges []int64, shift int, maxID int64, p *params) string {
	var buckets []string
	var ids []string
	for _, blk := range ranges {
		lo, hi := blk<<shift, (blk+1)<<shift
		for k := (hi - 1) >> bucketShift; k >= lo>>bucketShift; k-- {
			if s := "~" + strconv.FormatInt(k, 10); !slices.Contains(buckets, s) {
				buckets = append(buckets, s)
			}
		}
		ids = append(ids, `c.id + 0 >= `+p.add(lo)+` AND c.id + 0 < `+p.add(hi))
	}
	out := ` AND ` + bucketOf + ` @@ ` + p.add(strings.Join(buckets, " | ")) + `::tsquery AND (` + strings.Join(ids, " OR ") + `)`
	if maxID > 0 {
		out += ` AND c.id <= ` + p.add(maxID)
	}
	return out
}
