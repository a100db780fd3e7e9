package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clawledger/clawledger"
)

// Writes are batched: they join the open write transaction, which commits
// once it holds batchBytes of lines (at a source's commit) and on Flush.
// Rows wait in memory (pending) until pendingBytes of them gather, a read
// needs them, or the batch commits: then each table's rows go in one
// binary COPY and the statements in one pipelined round trip, so many
// small sources cost a few round trips, not a few each.
//
// A round sent because enough rows gathered goes in the background: the
// server stores it while the writer decodes and encodes the next one (the
// two took turns, leaving a third of two cores idle). At most one round is
// in flight, and until the writer waits for its answer (wait) the
// connection is the round's: every use of it (the next round, a read, a
// commit, a rollback, the lock) waits first, and a failed round is handled
// there as a round sent in the foreground is, by the call that waited.
//
// All of this is one lane's: a writer has several (lanes.go), each with a
// connection, a batch and a round in flight of its own.
//
// Everything sent in a transaction is kept (log) until it commits. When
// the connection is lost, the writer reconnects with backoff, takes the
// host's writer lock again and, if no other writer wrote for the host
// meanwhile (the host's batch token is the one it last committed), sends
// the log again in a new transaction. Each commit writes a new token with
// the batch, so a commit whose answer was lost is known by its token.
var (
	batchBytes   int64 = 32 << 20
	pendingBytes int64 = 4 << 20
)

const (
	// maxLogBytes bounds the log: a larger transaction (a file of
	// hundreds of MB replaced in one) is not replayed in place, it fails,
	// and the next run reads the source again (nothing of it committed).
	maxLogBytes = 256 << 20
	// reconnectFor bounds the reconnection attempts after a lost connection.
	reconnectFor = 2 * time.Minute
)

type writer struct {
	db     *DB
	holder clawledger.Holder
	// main is the writer's first lane, which holds the host's writer lock
	// (itself for the first lane); lane is this one's number
	main *writer
	lane int
	conn *pgx.Conn
	pid  uint32 // the server process of conn
	// locked, on the first lane, says it holds the host's writer lock
	locked bool
	// committed is the token of the host's last batch as this writer knows
	// it: its own last commit's, or what it found when it took the lock
	// (kept by the first lane for all)
	committed string
	b         *batch
	// flight is the round in flight in the background, nil when none. It
	// is part of the batch: whatever ends the batch waits for it first.
	flight *flight
	// open counts the ingest transactions begun on this lane and not
	// finished
	open      int
	lineIDs   idBlock
	sourceIDs idBlock
	chunkIDs  idBlock

	// the first lane's, for all (lanes.go)
	lanes  []*writer         // every lane, the first one first
	cur    int               // the lane the next source goes on, unless it sticks to one
	sticky map[int64]*writer // sources with rows in a lane's open batch, and their lane
	spare  spareBufs         // the buffers of committed rounds' rows
	multi  bool              // lanes besides the first hold open batches since the last barrier
	voided map[int64]bool    // state dirs whose digest was voided and committed since the last barrier

	// hook, in tests, runs before each round trip of a batch ("send"),
	// on the goroutine of a round sent in the background before the round
	// goes out ("inflight"), before the writer waits for that round's
	// answer ("wait"), before its commit ("commit"), after it ("committed":
	// an error it returns is taken for the commit's answer) and after each
	// failed attempt to reach the server ("retry"), with the lane's number
	// (the first lane's field, for all)
	hook func(lane int, stage string) error
}

// flight is a round sent in the background.
type flight struct {
	done    chan error // its answer
	storing string     // the source being stored when it was sent, for the message of its failure
}

// batch is the open write transaction.
type batch struct {
	tx       pgx.Tx
	log      []round // what was sent in tx, in order
	logBytes int64
	replay   bool // log holds everything sent (it was never over maxLogBytes)
	pend     round
	lines    int64                         // bytes of lines written in the batch
	sessions map[int64]*clawledger.Session // session summaries saved in the batch
}

// round is what one round trip sends: COPYs, then statements pipelined.
// Statements queued with rows commute with them (cursor and summary
// updates): anything that touches rows (a delete, a savepoint) is sent
// at once, after what is pending, as a round of its own.
type round struct {
	copies []*copyBuf
	stmts  []stmt
	bytes  int64
	// cursors, while the round is pending, holds the rows of its statement
	// stmts[cursorsAt] (updateSourcesSQL), which may take more of them
	// (queueCursor); its arguments are set when the round is sent
	cursors   *rowSet
	cursorsAt int
}

type stmt struct {
	sql  string
	args []any
}

// rowSet is the values of several rows for one statement, whose
// arguments are arrays: the columns of the rows' values (each an int64,
// a string or a []byte), in the order added.
type rowSet struct {
	ids  map[int64]bool // the rows' keys
	rows [][]any
}

func (r *rowSet) add(id int64, values []any) {
	if r.ids == nil {
		r.ids = map[int64]bool{}
	}
	r.ids[id] = true
	r.rows = append(r.rows, values)
}

// args are the statement's arguments: the columns.
func (r *rowSet) args() []any {
	out := make([]any, len(r.rows[0]))
	for j := range out {
		switch r.rows[0][j].(type) {
		case int64:
			out[j] = column[int64](r.rows, j)
		case string:
			out[j] = column[string](r.rows, j)
		case []byte:
			out[j] = column[[]byte](r.rows, j)
		default:
			panic(fmt.Sprintf("rowSet: a %T value", r.rows[0][j]))
		}
	}
	return out
}

func column[T any](rows [][]any, j int) []T {
	c := make([]T, len(rows))
	for i, r := range rows {
		c[i] = r[j].(T)
	}
	return c
}

func (r *round) empty() bool { return len(r.copies) == 0 && len(r.stmts) == 0 }

// closeCursors sets the arguments of the round's statement updating
// cursors, which takes no more of them.
func (r *round) closeCursors() {
	if r.cursors != nil {
		r.stmts[r.cursorsAt].args = r.cursors.args()
		r.cursors = nil
	}
}

// rows returns the pending COPY rows of a table, starting them (in a
// spare buffer, if any).
func (r *round) rows(table string, cols []string, spare *spareBufs) *copyBuf {
	for _, c := range r.copies {
		if c.table == table {
			return c
		}
	}
	c := newCopyBuf(table, cols, spare)
	r.copies = append(r.copies, c)
	return c
}

// fire runs the test hook, if any, for a stage of this lane's batch.
func (w *writer) fire(stage string) error {
	if h := w.main.hook; h != nil {
		return h(w.lane, stage)
	}
	return nil
}

// connect opens the writer's connection when it has none (or lost it).
func (w *writer) connect(ctx context.Context) error {
	if w.conn != nil && !w.conn.IsClosed() {
		return nil
	}
	if w.conn != nil {
		w.conn.Close(ctx)
	}
	cc := w.db.cfg.ConnConfig.Copy()
	cc.RuntimeParams["application_name"] = holderName(w.holder)
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return w.db.fail(err)
	}
	w.conn, w.pid = conn, conn.PgConn().PID()
	return nil
}

// begin opens the batch's transaction when none is open.
func (w *writer) begin(ctx context.Context) error {
	if w.b != nil {
		return nil
	}
	m := w.main
	if !m.locked {
		return errors.New("writing to the ledger without holding the host's writer lock")
	}
	w.b = &batch{replay: true, sessions: map[int64]*clawledger.Session{}}
	if w.conn == nil || w.conn.IsClosed() {
		if w == m { // lost since the last batch, and the lock with it
			return w.recover(ctx, errors.New("the connection was lost"))
		}
		// another lane: connected when first used, or lost while it held
		// no batch
		if err := w.connectLane(ctx); err != nil {
			if retryable(err) {
				return w.recover(ctx, err)
			}
			w.b = nil
			return w.db.fail(err)
		}
	}
	tx, err := w.conn.BeginTx(ctx, batchBegin(w.conn.Config()))
	if err != nil {
		if lostConnection(w.conn, err) {
			return w.recover(ctx, err)
		}
		w.b = nil
		return w.db.fail(err)
	}
	w.b.tx = tx
	return nil
}

// queue adds a statement that commutes with pending rows.
func (w *writer) queue(ctx context.Context, sql string, args ...any) error {
	if err := w.begin(ctx); err != nil {
		return err
	}
	w.b.pend.stmts = append(w.b.pend.stmts, stmt{sql, args})
	return w.maybeSend(ctx, nil)
}

// maybeSend sends what is pending once there is enough of it, in the
// background; storing is the source being stored, if any.
func (w *writer) maybeSend(ctx context.Context, storing *clawledger.Source) error {
	p := &w.b.pend
	p.bytes = 0
	for _, c := range p.copies {
		p.bytes += int64(c.size())
	}
	if p.bytes < pendingBytes {
		return nil
	}
	if err := w.wait(ctx); err != nil {
		return err
	}
	r := w.b.pend
	w.b.pend = round{}
	f := &flight{done: make(chan error, 1)}
	if storing != nil {
		f.storing = filepath.Join(storing.StateDir, storing.Rel)
	}
	tx := w.log(r)
	w.flight = f
	// the next source goes on the next lane, while this one's server
	// process stores the round
	w.main.cur = (w.lane + 1) % len(w.main.lanes)
	go func() {
		w.fire("inflight")
		f.done <- w.run(ctx, tx, r)
	}()
	return nil
}

// exec sends what is pending, then the statements, in order.
func (w *writer) exec(ctx context.Context, stmts ...stmt) error {
	if err := w.send(ctx); err != nil {
		return err
	}
	return w.sendRound(ctx, round{stmts: stmts})
}

// send sends what is pending.
func (w *writer) send(ctx context.Context) error {
	if err := w.begin(ctx); err != nil {
		return err
	}
	if w.b.pend.empty() {
		return nil
	}
	r := w.b.pend
	w.b.pend = round{}
	return w.sendRound(ctx, r)
}

// sendRound sends a round once the one in flight is answered, and waits
// for its answer.
func (w *writer) sendRound(ctx context.Context, r round) error {
	if err := w.wait(ctx); err != nil {
		return err
	}
	if err := w.begin(ctx); err != nil {
		return err
	}
	return w.answer(ctx, w.run(ctx, w.log(r), r))
}

// log adds a round about to be sent to the batch's log, and returns the
// transaction to send it in.
func (w *writer) log(r round) pgx.Tx {
	r.closeCursors() // in r's statements, which the caller sends
	b := w.b
	if b.replay {
		for _, c := range r.copies {
			b.logBytes += int64(c.size())
		}
		if b.logBytes > maxLogBytes {
			b.replay, b.log = false, nil
		} else {
			b.log = append(b.log, r)
		}
	}
	w.fire("send")
	return b.tx
}

// wait waits for the answer of the round in flight, if any: the connection
// is the writer's again.
func (w *writer) wait(ctx context.Context) error {
	return w.answer(ctx, w.settle())
}

// settle waits for the round in flight, if any, and returns its answer.
func (w *writer) settle() error {
	f := w.flight
	if f == nil {
		return nil
	}
	w.fire("wait")
	w.flight = nil
	err := <-f.done
	if err != nil && f.storing != "" {
		err = fmt.Errorf("the rows sent while storing %s: %w", f.storing, err)
	}
	return err
}

// answer takes a round's answer: a lost connection is recovered (which
// sends the round again with the rest of the log), any other failure
// rolls the batch back.
func (w *writer) answer(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if lostConnection(w.conn, err) {
		return w.recover(ctx, err)
	}
	w.main.abort()
	return w.db.fail(err)
}

// run sends one round in tx (on a goroutine of its own for a round in
// flight: it uses nothing of the writer's).
func (w *writer) run(ctx context.Context, tx pgx.Tx, r round) error {
	ctx = context.WithoutCancel(ctx) // a statement runs to its end; callers check between them
	for _, c := range r.copies {
		if _, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(c.data()), c.sql()); err != nil {
			return fmt.Errorf("copy into %s: %w", c.table, err)
		}
	}
	switch len(r.stmts) {
	case 0:
		return nil
	case 1:
		_, err := tx.Exec(ctx, r.stmts[0].sql, r.stmts[0].args...)
		return err
	}
	pb := &pgx.Batch{}
	for _, s := range r.stmts {
		pb.Queue(s.sql, s.args...)
	}
	res := tx.SendBatch(ctx, pb)
	for range r.stmts {
		if _, err := res.Exec(); err != nil {
			res.Close()
			return err
		}
	}
	return res.Close()
}

// read runs a read in the batch's transaction, after what is pending (it
// sees the batch's writes), recovering a lost connection.
func (w *writer) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := w.send(ctx); err != nil {
		return err
	}
	return w.readPending(ctx, fn)
}

// readPending runs a read in the batch's transaction that what is pending
// does not change, without sending it.
func (w *writer) readPending(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := w.wait(ctx); err != nil {
		return err
	}
	if err := w.begin(ctx); err != nil {
		return err
	}
	for {
		err := fn(w.b.tx)
		if err == nil || errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if !lostConnection(w.conn, err) {
			w.main.abort()
			return w.db.fail(err)
		}
		if err := w.recover(ctx, err); err != nil {
			return err
		}
	}
}

// flush commits the lane's batch: its rows, then its token.
func (w *writer) flush(ctx context.Context) error {
	if w.b == nil {
		return nil
	}
	m := w.main
	token := uuid.NewString()
	// the token goes with what is pending, in its round trip
	w.b.pend.stmts = append(w.b.pend.stmts, stmt{`UPDATE hosts SET batch = $1 WHERE id = $2`, []any{token, w.db.hostID}})
	if err := w.send(ctx); err != nil {
		return err
	}
	for {
		w.fire("commit")
		err := w.b.tx.Commit(context.WithoutCancel(ctx))
		if err == nil {
			err = w.fire("committed")
		}
		if err == nil {
			m.committed = token
			w.committedBatch()
			return nil
		}
		if !lostConnection(w.conn, err) {
			w.b = nil
			m.abort()
			return w.db.fail(err)
		}
		// did it commit before the connection went?
		done, err := m.reattach(ctx, err, w, w, token)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// committedBatch forgets the lane's batch once committed: its sources
// stick to it no more, and its rounds' buffers, which nothing sends
// again, take other rows.
func (w *writer) committedBatch() {
	for _, r := range w.b.log {
		for _, c := range r.copies {
			w.main.spare.keep(c)
		}
	}
	w.b = nil
	for id, l := range w.main.sticky {
		if l == w {
			delete(w.main.sticky, id)
		}
	}
}

// ready makes the writer's connection free for a transaction of its own:
// every lane's batch committed, the connection (and the host's lock)
// there, made again if it was lost.
func (w *writer) ready(ctx context.Context) error {
	if err := w.barrier(ctx); err != nil {
		return err
	}
	if w.b == nil && w.locked && w.conn != nil && !w.conn.IsClosed() {
		return nil
	}
	if err := w.begin(ctx); err != nil {
		return err
	}
	return w.flush(ctx)
}

// abort rolls every lane's batch back, after a failed write or when it is
// given up (a failed write rolls back all the writer has not committed,
// as one batch would); it returns the failure of a round still in flight,
// which no call heard of yet (a lost connection is no failure here: the
// batch went with it). Called on the first lane.
func (m *writer) abort() error {
	var errs []error
	for _, w := range m.lanes {
		if w.b == nil {
			continue
		}
		err := w.settle()
		if lostConnection(w.conn, err) {
			err = nil
		}
		if w.b.tx != nil && w.conn != nil && !w.conn.IsClosed() {
			w.b.tx.Rollback(context.Background())
		}
		w.b = nil
		errs = append(errs, err)
	}
	m.endEpoch()
	clear(m.sticky)
	return m.db.fail(errors.Join(errs...))
}

// recover brings a batch whose connection was lost back to where it was:
// it reconnects (with backoff), and sends the log again in a new
// transaction (with every other lane's that had to connect again).
func (w *writer) recover(ctx context.Context, cause error) error {
	if _, err := w.main.reattach(ctx, cause, w, nil, ""); err != nil {
		return err
	}
	return nil
}

// reattach reconnects after a lane's connection was lost (cause),
// retrying with backoff for up to reconnectFor: the first lane takes the
// writer lock again (unless its session is still there, which holds it),
// and the host's batch token is checked. When it is the token a lane was
// committing (committing, whose commit's answer was lost), that commit
// went through: reattach reports done. When no other writer wrote
// meanwhile, each lane whose batch was on a lost connection (every lane
// but a first one still there) sends its log again in a new transaction;
// else the batches are lost (ECONFLICT). Called on the first lane.
func (m *writer) reattach(ctx context.Context, cause error, lost, committing *writer, token string) (done bool, err error) {
	// every lane's round in flight answers first: the lost one with the
	// rest, a round the server refused fails the batches
	for _, w := range m.lanes {
		if ferr := w.settle(); ferr != nil && !lostConnection(w.conn, ferr) {
			m.abort()
			return false, m.db.fail(ferr)
		}
	}
	batches := false
	for _, w := range m.lanes {
		if w.b == nil {
			continue
		}
		batches = true
		if !w.b.replay {
			m.abort()
			return false, m.db.fail(fmt.Errorf("the connection was lost during a write too large to send again (it was rolled back): %w", cause))
		}
	}
	if !batches {
		return false, m.db.fail(cause)
	}
	delay, deadline := 100*time.Millisecond, time.Now().Add(reconnectFor)
	for {
		done, err = m.reattachOnce(ctx, lost, committing, token)
		lost = m // after a failed attempt, nothing is left of the sessions
		if err == nil || !retryable(err) {
			if err != nil {
				m.drop()
			}
			return done, err
		}
		if !time.Now().Before(deadline) {
			m.drop()
			return false, m.db.fail(fmt.Errorf("the connection was lost (%v) and could not be made again: %w", cause, err))
		}
		m.fire("retry")
		select {
		case <-ctx.Done():
			m.drop()
			return false, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// drop gives up every lane's batch after a failed reattach: a transaction
// a lane began again is rolled back.
func (m *writer) drop() {
	for _, w := range m.lanes {
		if w.b != nil && w.b.tx != nil && w.conn != nil && !w.conn.IsClosed() {
			w.b.tx.Rollback(context.Background())
		}
		w.b = nil
	}
	m.endEpoch()
	clear(m.sticky)
}

// errIntervened: another writer wrote for the host while this one was
// disconnected, so its batch cannot be sent again.
var errIntervened = errors.New("another writer wrote for this host while the connection was lost: the batch was rolled back")

func (m *writer) reattachOnce(ctx context.Context, lost, committing *writer, token string) (bool, error) {
	db := m.db
	// the first lane's session, when still there, holds the lock: nothing
	// else wrote for the host, and its batch is whole
	kept := false
	if lost != m && m.locked && m.conn != nil && !m.conn.IsClosed() {
		var err error
		if m.b != nil && m.b.tx != nil {
			_, err = m.b.tx.Exec(ctx, `SELECT 1`)
		} else {
			_, err = m.conn.Exec(ctx, `SELECT 1`)
		}
		switch {
		case err == nil:
			kept = true
		case !lostConnection(m.conn, err):
			return false, err
		}
	}
	var old []int32
	for _, w := range m.lanes {
		if w == m && kept {
			continue
		}
		if w.pid != 0 {
			old = append(old, int32(w.pid))
		}
		if w.conn != nil {
			w.conn.Close(ctx)
			w.conn = nil
		}
	}
	if !kept {
		if err := m.connect(ctx); err != nil {
			return false, err
		}
	}
	// the lost sessions may still hold their locks (and a commit in
	// progress) until the server notices they are gone: end them, and
	// wait for them to go (the locks tell)
	if len(old) > 0 {
		if _, err := m.conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE pid = ANY($1) AND application_name LIKE $2`, old, fmt.Sprintf("clawledger %% %d %%", os.Getpid())); err != nil {
			return false, err
		}
	}
	var q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	} = m.conn
	if kept {
		if err := m.waitLanes(ctx, 10*time.Second); err != nil {
			return false, err
		}
		if m.b != nil {
			q = m.b.tx
		}
	} else {
		if err := m.takeLocks(ctx, 10*time.Second); err != nil {
			return false, err
		}
		if err := m.recordWriter(ctx); err != nil {
			return false, err
		}
	}
	var current string
	if err := q.QueryRow(ctx, `SELECT coalesce(batch::text, '') FROM hosts WHERE id = $1`, db.hostID).Scan(&current); err != nil {
		return false, err
	}
	done := false
	switch {
	case committing != nil && current == token:
		done = true
		m.committed = token
		committing.committedBatch()
	case current != m.committed:
		m.committed = current
		return false, clawledger.Reasonf(clawledger.ECONFLICT, errIntervened, "%s: %v", db.ledgerName(), errIntervened)
	}
	for _, w := range m.lanes {
		if w.b == nil || (w == m && kept) {
			continue
		}
		if w != m {
			if err := w.connectLane(ctx); err != nil {
				return false, err
			}
		}
		tx, err := w.conn.BeginTx(ctx, batchBegin(w.conn.Config()))
		if err != nil {
			return false, err
		}
		w.b.tx = tx
		for _, r := range w.b.log {
			if err := w.run(ctx, tx, r); err != nil {
				return false, err
			}
		}
	}
	return done, nil
}

// retryable reports whether a reconnection attempt may succeed later.
func retryable(err error) bool {
	if errors.Is(err, errLaneLock) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// the server is starting or shutting down, or is out of connections
		return pe.Code == "57P03" || pe.Code == "53300" || lostConnection(nil, err)
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || lostConnection(nil, err)
}

// lostConnection reports whether err means the session is gone (and its
// transaction with it): the server ended it, restarted, or cannot be
// reached.
func lostConnection(conn *pgx.Conn, err error) bool {
	if err == nil {
		return false
	}
	if conn != nil && conn.IsClosed() {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.As(err, &ne) || errors.As(err, &ce) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

func (w *writer) close() error {
	// the lock goes first: the server lets a closed session's locks go
	// only once its process has noticed, a moment later
	err := w.unlock()
	for _, l := range w.lanes {
		if l.conn != nil {
			err = errors.Join(err, l.conn.Close(context.Background()))
			l.conn = nil
		}
	}
	w.locked = false
	return err
}

// onPool runs fn, which works on the readers' pool, again with backoff
// while the server cannot be reached, for up to reconnectFor.
func (w *writer) onPool(ctx context.Context, fn func() error) error {
	delay, deadline := 100*time.Millisecond, time.Now().Add(reconnectFor)
	for {
		err := fn()
		if err == nil || !lostConnection(nil, err) || !time.Now().Before(deadline) {
			return w.db.fail(err)
		}
		w.fire("retry")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// idBlock is a block of ids taken from a sequence that increments by
// its size: the writer hands them out ascending, and a block taken is
// never handed out again, whatever becomes of the transaction.
type idBlock struct{ next, end int64 }

// nextID hands out the next id of a block of seq (of size n), taking a
// block when the last one is used up. Blocks are taken on the readers'
// pool, not on the writer's connection, which a round in flight may hold:
// a sequence is not transactional.
func (w *writer) nextID(ctx context.Context, blk *idBlock, seq string, n int64) (int64, error) {
	if blk.next == blk.end {
		var base int64
		if err := w.onPool(ctx, func() error {
			return w.db.pool.QueryRow(context.WithoutCancel(ctx), `SELECT nextval('`+seq+`')`).Scan(&base)
		}); err != nil {
			return 0, err
		}
		blk.next, blk.end = base, base+n
	}
	id := blk.next
	blk.next++
	return id, nil
}
