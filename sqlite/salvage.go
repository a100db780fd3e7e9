package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// A salvage copies what a damaged ledger still holds into a new one, the
// way SQLite's .recover does it with SQL: the schema is read (damage to it
// ignored), the tables are made again, every table is copied row by row in
// rowid order, and where a read fails on a damaged page the copy looks for
// the next rowid it can read from (doubling its step, then halving back),
// so that one damaged page loses only the rows on it. Indexes, triggers and
// views are made again once the rows are in. What could not be read is
// reported, table by table.

var _ clawledger.Salvager = (*DB)(nil)

// salvageBatch is how many rows a salvage copies per transaction.
const salvageBatch = 20000

// schemaObject is a row of sqlite_master.
type schemaObject struct{ typ, name, table, sql string }

// Salvage copies every row of the ledger it can still read into a new
// ledger file at out, which must not exist (the ledger must have been
// opened with OpenOptions.Damaged for a damaged schema to be read).
// A salvage that fails removes the file it made.
func (db *DB) Salvage(ctx context.Context, out string) (rep *clawledger.SalvageReport, err error) {
	if out, err = filepath.Abs(out); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, clawledger.Errorf(clawledger.ECONFLICT, "%s exists: a salvage writes a new file", out)
	} else if err != nil {
		return nil, err
	}
	f.Close()
	dst, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(out, "_pragma=busy_timeout(30000)", "_pragma=synchronous(NORMAL)"))
	if err != nil {
		os.Remove(out)
		return nil, err
	}
	dst.SetMaxOpenConns(1)
	defer func() {
		dst.Close()
		if err != nil {
			for _, p := range []string{out, out + "-wal", out + "-shm"} {
				os.Remove(p)
			}
		}
	}()
	if err := initialize(out, false); err != nil {
		return nil, err
	}
	src, err := db.r.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	s := &salvager{ctx: ctx, src: src, dst: dst, rep: &clawledger.SalvageReport{Out: out, Tables: []clawledger.SalvagedTable{}, Schema: []clawledger.SalvageFailure{}}}
	if err := s.run(); err != nil {
		return nil, err
	}
	if s.rep.Integrity, err = queryStrings(ctx, dst, "PRAGMA integrity_check"); err != nil {
		return nil, err
	}
	if _, err := dst.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return nil, err
	}
	return s.rep, nil
}

type salvager struct {
	ctx context.Context
	src *sql.Conn // the damaged ledger
	dst *sql.DB   // the new one
	rep *clawledger.SalvageReport
}

func (s *salvager) fail(name string, err error) {
	s.rep.Schema = append(s.rep.Schema, clawledger.SalvageFailure{Name: name, Error: err.Error()})
}

func (s *salvager) run() error {
	var schema []schemaObject
	rows, err := s.src.QueryContext(s.ctx, `SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY rowid`)
	if err == nil {
		for rows.Next() {
			var o schemaObject
			if err := rows.Scan(&o.typ, &o.name, &o.table, &o.sql); err != nil {
				rows.Close()
				return err
			}
			schema = append(schema, o)
		}
		err = closeRows(rows)
	}
	if err != nil {
		if !damaged(err) {
			return err
		}
		s.fail("sqlite_master", err) // what was read of it is used
	}
	if len(schema) == 0 {
		return clawledger.Reasonf(clawledger.EINTERNAL, clawledger.ErrDamaged, "nothing of the ledger can be read: its schema is lost (%v)", err)
	}
	// tables first, virtual ones (which make their own shadow tables)
	// before the others, rows next, then what depends on them
	virtual := func(o schemaObject) bool { return strings.HasPrefix(strings.ToUpper(o.sql), "CREATE VIRTUAL TABLE") }
	for _, pass := range []func(schemaObject) bool{
		func(o schemaObject) bool { return o.typ == "table" && virtual(o) },
		func(o schemaObject) bool { return o.typ == "table" && !virtual(o) },
	} {
		for _, o := range schema {
			if pass(o) && !strings.HasPrefix(o.name, "sqlite_") {
				if _, err := s.dst.ExecContext(s.ctx, o.sql); err != nil && !strings.Contains(err.Error(), "already exists") {
					s.fail(o.name, err)
				}
			}
		}
	}
	for _, o := range schema {
		if o.typ == "table" && !virtual(o) && !strings.HasPrefix(o.name, "sqlite_") {
			if err := s.copyTable(o); err != nil {
				return err
			}
		}
	}
	if err := s.sequences(); err != nil {
		return err
	}
	for _, typ := range []string{"index", "trigger", "view"} {
		for _, o := range schema {
			if o.typ == typ && o.sql != "" {
				if _, err := s.dst.ExecContext(s.ctx, o.sql); err != nil {
					s.fail(o.name, err)
				}
			}
		}
	}
	return nil
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// copyTable copies one table's readable rows.
func (s *salvager) copyTable(o schemaObject) error {
	t := clawledger.SalvagedTable{Name: o.name, Lost: []string{}}
	defer func() { s.rep.Tables = append(s.rep.Tables, t) }()
	cols, err := queryStrings(s.ctx, s.dst, `SELECT name FROM pragma_table_info(?)`, o.name)
	if err != nil || len(cols) == 0 {
		t.Lost = append(t.Lost, "the whole table: it could not be made again")
		return nil
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = quote(c)
	}
	list := strings.Join(quoted, ", ")
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	c := &tableCopy{s: s, name: quote(o.name), cols: len(cols)}
	if strings.Contains(strings.ToUpper(o.sql), "WITHOUT ROWID") {
		c.sel = fmt.Sprintf(`SELECT %s FROM %s`, list, c.name)
		c.ins = fmt.Sprintf(`INSERT OR REPLACE INTO %s(%s) VALUES(%s)`, c.name, list, marks)
		n, _, err := c.copyFrom(nil)
		t.Rows = n
		switch {
		case err == nil:
		case !damaged(err):
			return err
		case n == 0:
			t.Lost = append(t.Lost, "the whole table: "+err.Error())
		default:
			t.Lost = append(t.Lost, fmt.Sprintf("every row after the first %d (in key order): %v", n, err))
		}
		return nil
	}
	c.sel = fmt.Sprintf(`SELECT rowid, %s FROM %s WHERE rowid >= ? ORDER BY rowid`, list, c.name)
	c.ins = fmt.Sprintf(`INSERT OR REPLACE INTO %s(rowid, %s) VALUES(?, %s)`, c.name, list, marks)
	c.probe = fmt.Sprintf(`SELECT rowid FROM %s WHERE rowid >= ? ORDER BY rowid LIMIT 1`, c.name)
	from := int64(math.MinInt64)
	for {
		n, last, err := c.copyFrom(&from)
		t.Rows += n
		if err == nil {
			return nil
		}
		if !damaged(err) {
			return err
		}
		bad := from
		if n > 0 {
			if last == math.MaxInt64 {
				return nil
			}
			bad = last + 1
		}
		// the row a read failed on, when the way to it can be read
		if r, found, perr := c.first(bad); perr == nil {
			if !found {
				return nil
			}
			bad = r
		}
		next, ok := c.nextReadable(bad)
		switch {
		case !ok && bad == math.MinInt64:
			t.Lost = append(t.Lost, "the whole table: "+err.Error())
		case !ok:
			t.Lost = append(t.Lost, fmt.Sprintf("rowids from %d on", bad))
		case bad == math.MinInt64:
			t.Lost = append(t.Lost, fmt.Sprintf("rowids up to %d", next-1))
		case next-1 == bad:
			t.Lost = append(t.Lost, fmt.Sprintf("rowid %d", bad))
		default:
			t.Lost = append(t.Lost, fmt.Sprintf("rowids %d-%d", bad, next-1))
		}
		if !ok {
			return nil
		}
		from = next
	}
}

// tableCopy copies one table's rows.
type tableCopy struct {
	s        *salvager
	name     string // quoted
	cols     int
	sel, ins string
	probe    string // rowid tables: the first rowid from a rowid on
}

// copyFrom copies rows (from the rowid *from on, for a rowid table) until
// the end or the first error, committing every salvageBatch rows; it
// returns how many it copied and the last rowid copied.
func (c *tableCopy) copyFrom(from *int64) (n, last int64, err error) {
	var args []any
	if from != nil {
		args = append(args, *from)
	}
	rows, err := c.s.src.QueryContext(c.s.ctx, c.sel, args...)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	width := c.cols
	if from != nil {
		width++
	}
	vals := make([]any, width)
	ptrs := make([]any, width)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var tx *sql.Tx
	var ins *sql.Stmt
	commit := func() error {
		if tx == nil {
			return nil
		}
		err := tx.Commit()
		tx, ins = nil, nil
		return err
	}
	defer func() {
		if cerr := commit(); err == nil {
			err = cerr
		}
	}()
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, last, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok && b == nil {
				vals[i] = []byte{} // a zero-length blob, not NULL (FTS5 keeps them)
			}
		}
		if tx == nil {
			if tx, err = c.s.dst.BeginTx(c.s.ctx, nil); err != nil {
				return n, last, err
			}
			if ins, err = tx.PrepareContext(c.s.ctx, c.ins); err != nil {
				return n, last, err
			}
		}
		if _, err := ins.ExecContext(c.s.ctx, vals...); err != nil {
			return n, last, err
		}
		n++
		if from != nil {
			last, _ = vals[0].(int64)
		}
		if n%salvageBatch == 0 {
			if err := commit(); err != nil {
				return n, last, err
			}
		}
	}
	return n, last, rows.Err()
}

// first reads the first rowid from a rowid on: found is false when there
// is none; err is the read's error (the way to it is damaged).
func (c *tableCopy) first(from int64) (rowid int64, found bool, err error) {
	err = c.s.src.QueryRowContext(c.s.ctx, c.probe, from).Scan(&rowid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return rowid, err == nil, err
}

// nextReadable finds the smallest rowid after bad from which reading
// works: it steps forward by doubling steps until a read works, then
// halves the step back between the last failure and the first success.
func (c *tableCopy) nextReadable(bad int64) (int64, bool) {
	readable := func(x int64) bool { _, _, err := c.first(x); return err == nil }
	lo, hi := bad, bad
	for step := int64(1); ; step *= 2 {
		if step <= 0 || bad > math.MaxInt64-step {
			hi = math.MaxInt64
		} else {
			hi = bad + step
		}
		if readable(hi) {
			break
		}
		if hi == math.MaxInt64 || c.s.ctx.Err() != nil {
			return 0, false
		}
		lo = hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if readable(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// sequences carries AUTOINCREMENT counters over, so that an id is never
// used again (an episodic event's, after gc).
func (s *salvager) sequences() error {
	rows, err := s.src.QueryContext(s.ctx, `SELECT name, seq FROM sqlite_sequence`)
	if err != nil {
		if damaged(err) || strings.Contains(err.Error(), "no such table") {
			s.fail("sqlite_sequence", err)
			return nil
		}
		return err
	}
	type seq struct {
		name string
		seq  int64
	}
	var seqs []seq
	for rows.Next() {
		var q seq
		if err := rows.Scan(&q.name, &q.seq); err != nil {
			rows.Close()
			return err
		}
		seqs = append(seqs, q)
	}
	if err := closeRows(rows); err != nil {
		s.fail("sqlite_sequence", err)
	}
	for _, q := range seqs {
		res, err := s.dst.ExecContext(s.ctx, `UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?`, q.seq, q.name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := s.dst.ExecContext(s.ctx, `INSERT INTO sqlite_sequence(name, seq) VALUES(?, ?)`, q.name, q.seq); err != nil {
				return err
			}
		}
	}
	return nil
}

// queryStrings runs a query whose rows are one string each.
func queryStrings(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	return queryAll(ctx, q, func(r scanner) (s string, err error) { return s, r.Scan(&s) }, query, args...)
}
