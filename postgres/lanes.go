package postgres

import (
	"context"

	"github.com/clawledger/clawledger"
)

// A writer writes on several connections, its lanes, so that one host's
// ingest spreads the server's work (the COPY into lines and its indexes,
// most of an ingest's CPU) over as many server processes: with one, an
// ingest waited for its one server process while a core stood idle.
//
// Each lane has its own transaction, batch, log and round in flight
// (batch.go); the first lane is the one that holds the host's writer lock.
// A source's writes all go on one lane, so its lines, derived rows and
// cursor commit together in its lane's transaction:
//
//   - A source goes on the lane the writer is filling (cur), which moves
//     to the next lane each time a lane sends a round in the background:
//     the server stores that round while the writer fills the next lane.
//     A source whose rows a lane's open batch holds sticks to that lane
//     until it commits (a file committed in parts, its cursor updated
//     again).
//   - Everything else (state dirs, registering sources, cron jobs, reads,
//     the audit trail, the derived layers, forget) goes on the first lane,
//     after a barrier: every other lane commits first, so that the first
//     lane reads what they wrote and locks nothing they hold.
//   - Rows of the host that several sources' writes touch through the
//     ledger's triggers (search_current and cortex_current, "the derived
//     layers are current", and a state dir's digest, "every file is as
//     the last complete ingest saw it") are voided by the first lane, and
//     committed, before a second lane takes a source (and before a source
//     of another state dir goes on any lane then): with them gone, no two
//     lanes' transactions wait for each other's row, and the writer,
//     which drives all lanes from one goroutine, never waits for itself.
//     Voiding them only says less than the ingest will have said anyway:
//     the derived layers look for changes, the next ingest reads the
//     state dir's files again (Scanned records the digest after a
//     barrier, once every lane committed the dir's sources).
//   - Line and source ids come from the first lane's blocks, handed out in
//     the order the writer stores lines, as with one lane: usage copies
//     are told apart by their ids, so reports do not depend on the lanes.
//
// A failed write rolls back every lane's batch; a lost connection makes
// every lane whose session is gone send its log again (reattach).
var laneCount = 2

// newWriter is a writer of laneCount lanes for db.
func newWriter(db *DB, holder clawledger.Holder) *writer {
	m := &writer{db: db, holder: holder, sticky: map[int64]*writer{}, voided: map[int64]bool{}}
	m.main = m
	m.lanes = []*writer{m}
	for i := 1; i < max(laneCount, 1); i++ {
		m.lanes = append(m.lanes, &writer{db: db, holder: holder, main: m, lane: i})
	}
	return m
}

// barrier commits every lane but the first, which then writes alone: what
// it reads and writes is not held by another lane's open transaction.
// Called on the first lane.
func (m *writer) barrier(ctx context.Context) error {
	for _, w := range m.lanes[1:] {
		if err := w.flush(ctx); err != nil {
			return err
		}
	}
	m.endEpoch()
	return nil
}

// endEpoch notes that no lane but the first holds an open batch.
func (m *writer) endEpoch() {
	m.multi, m.cur = false, 0
	clear(m.voided)
}

// laneFor returns the lane a source's writes go on: the one holding its
// rows, else the one being filled. Before a second lane takes a source,
// the first lane voids the rows of the host that the ledger's triggers
// would have two lanes lock, and commits. Called on the first lane.
func (m *writer) laneFor(ctx context.Context, sourceID, stateDirID int64) (*writer, error) {
	if w := m.sticky[sourceID]; w != nil {
		return w, nil // what it needed was voided when it first went there
	}
	w := m.lanes[m.cur]
	void := !m.multi && w != m || m.multi && stateDirID != 0 && !m.voided[stateDirID]
	switch {
	case void && m.open > 0:
		// the first lane commits only between its sources: this one goes
		// there, and its rows of the host with it
		w = m
	case void:
		var stmts []stmt
		if !m.multi {
			stmts = append(stmts,
				stmt{`DELETE FROM search_current WHERE host_id = $1`, []any{m.db.hostID}},
				stmt{`DELETE FROM cortex_current WHERE host_id = $1`, []any{m.db.hostID}})
		}
		if stateDirID != 0 {
			stmts = append(stmts, stmt{`UPDATE state_dirs SET files_digest = NULL WHERE id = $1 AND files_digest IS NOT NULL`, []any{stateDirID}})
		}
		if err := m.begin(ctx); err != nil {
			return nil, err
		}
		m.b.pend.stmts = append(m.b.pend.stmts, stmts...)
		if err := m.flush(ctx); err != nil {
			return nil, err
		}
		m.multi = true
		if stateDirID != 0 {
			m.voided[stateDirID] = true
		}
	}
	if sourceID != 0 {
		m.sticky[sourceID] = w
	}
	return w, nil
}
