package ledger

import (
	"context"
	"sync"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/search"
)

// matrix keeps the vector matrix across a Service's searches: a search
// reuses it while the stored vectors are the same, takes in only the vectors
// added since (a store's VectorLoader), and reloads it whole when the
// embedding space changed, when vectors went from either end (a rebuild, a
// switch of model), or once it grew by a quarter since its last whole load
// (vectors deleted in between, of a re-chunked file, stay in the matrix
// until then; a search drops their chunks, which are gone).
type matrix struct {
	mu          sync.Mutex // one load at a time; searches meanwhile wait and share it
	x           *search.VectorIndex
	space       string
	first, last int64 // the chunk ids at its ends
	base        int   // its size at its last whole load
}

// vectorMatrix returns the vector matrix of the store's vectors, kept
// across searches; nil when the store cannot load vectors incrementally
// (the search then loads them itself).
func (s *Service) vectorMatrix(ctx context.Context, st clawledger.SearchReader) (*search.VectorIndex, error) {
	vl, ok := st.(clawledger.VectorLoader)
	if !ok {
		return nil, nil
	}
	space, err := st.VectorSpace(ctx)
	if err != nil {
		return nil, err
	}
	first, last, err := vl.VectorRange(ctx)
	if err != nil {
		return nil, err
	}
	m := &s.vectors
	m.mu.Lock()
	defer m.mu.Unlock()
	same := m.x != nil && space == m.space && first == m.first
	switch {
	case same && last == m.last:
		return m.x, nil
	case same && last > m.last && m.x.Len()-m.base < m.base/4+1:
		// a copy sharing the matrix's arrays: appending writes only past the
		// end the searches still reading it see
		x := *m.x
		sink := &rangeSink{VectorSink: &x, first: m.first, last: m.last}
		if err := vl.LoadVectorsAfter(ctx, sink, m.last); err != nil {
			return nil, err
		}
		m.x, m.last = &x, sink.last
		return m.x, nil
	}
	x := search.NewVectorIndex(0)
	sink := &rangeSink{VectorSink: x}
	if err := vl.LoadVectorsAfter(ctx, sink, 0); err != nil {
		return nil, err
	}
	// the ends of what was loaded: vectors stored since VectorRange count in
	m.x, m.space, m.first, m.last, m.base = x, space, sink.first, sink.last, x.Len()
	return x, nil
}

// rangeSink passes vectors on and notes the chunk ids at the ends of what
// it was given.
type rangeSink struct {
	clawledger.VectorSink
	first, last int64
}

func (r *rangeSink) AddEncoded(id int64, m clawledger.VectorMeta, blob, agent, role, kind []byte) error {
	if r.first == 0 {
		r.first = id
	}
	r.last = id
	return r.VectorSink.AddEncoded(id, m, blob, agent, role, kind)
}
