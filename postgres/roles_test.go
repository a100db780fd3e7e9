package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/postgres"
	"github.com/clawledger/clawledger/search"
)

// psql runs a script of roles/ the way psql would with -v name=value for
// each of vars (only the :"name" form is used), statement by statement.
func psql(t *testing.T, dsn, file string, vars map[string]string) {
	t.Helper()
	b, err := os.ReadFile(file)
	check(t, err)
	script := string(b)
	for k, v := range vars {
		script = strings.ReplaceAll(script, `:"`+k+`"`, `"`+v+`"`)
	}
	var stmts []string
	for _, s := range strings.Split(script, ";") {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "--") {
				lines = append(lines, l)
			}
		}
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			stmts = append(stmts, s)
		}
	}
	pgtest.Exec(t, dsn, stmts...)
}

// as returns dsn with another user and without a search path (the roles
// set their own).
func as(t *testing.T, dsn, user string) string {
	u, err := url.Parse(dsn)
	check(t, err)
	u.User = url.User(user)
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return u.String()
}

// TestLeastPrivilege sets up the documented roles (roles/roles.sql, then
// roles/grants.sql after the writer's first run): the writer ingests and
// appends events; the reader answers the reports, searches and the audit
// trail, and can neither write nor read the episodic events (nor the audit
// trail's salt).
func TestLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	admin := pgtest.Server(t)
	suffix := strings.TrimPrefix(pgtest.NewSchema(t, admin), "t_")
	pgtest.Exec(t, admin, `DROP SCHEMA t_`+suffix) // roles.sql creates it, owned by the writer
	vars := map[string]string{"writer": "w_" + suffix, "reader": "r_" + suffix, "schema": "t_" + suffix}
	psql(t, admin, "roles/roles.sql", vars)
	t.Cleanup(func() {
		pgtest.Exec(t, admin, `DROP SCHEMA IF EXISTS t_`+suffix+` CASCADE`, `DROP OWNED BY `+vars["reader"], `DROP OWNED BY `+vars["writer"],
			`DROP ROLE `+vars["reader"], `DROP ROLE `+vars["writer"])
	})

	writerDSN, readerDSN := as(t, admin, vars["writer"]), as(t, admin, vars["reader"])
	w := openPG(t, writerDSN, "h")
	ingest(t, w, fixtures(t)["sample"]...)
	mustAppend(t, w, event(1, "s", "x", clawledger.EventDecision, 1, "a private decision", ""))
	if _, err := search.UpdateIndex(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	psql(t, admin, "roles/grants.sql", vars)

	r, err := postgres.Open(ctx, readerDSN, postgres.Options{ReadOnly: true})
	check(t, err)
	defer r.Close()
	if ss, err := r.Sessions(ctx, clawledger.SessionFilter{}); err != nil || len(ss) == 0 {
		t.Errorf("the reader lists %d sessions: %v", len(ss), err)
	}
	if u, err := r.Usage(ctx, clawledger.UsageFilter{}); err != nil || len(u) == 0 {
		t.Errorf("the reader's usage: %d groups, %v", len(u), err)
	}
	q, err := search.Parse("eastore")
	check(t, err)
	if m, _, err := r.Lexical(ctx, q, &clawledger.SearchFilter{}, 0); err != nil || len(m) == 0 {
		t.Errorf("the reader's search: %d matches, %v", len(m), err)
	}
	if invs, err := r.Inventories(ctx); err != nil || len(invs) == 0 {
		t.Errorf("the reader's inventories: %d, %v", len(invs), err)
	}
	if _, err := r.Timeline(ctx, clawledger.TimelineFilter{}); err != nil {
		t.Errorf("the reader's audit timeline: %v", err)
	}
	if _, _, err := r.Events(ctx, clawledger.EventFilter{ScopeSelector: clawledger.ScopeSelector{Global: true}}); !denied(err) {
		t.Errorf("the reader reads the episodic events: %v", err)
	}
	// a writer with the reader's role gets nowhere, and says why: the
	// ledger is read-only to it (a query's refresh then answers from the
	// ledger as it is, as on read-only media)
	if _, err := postgres.Open(ctx, readerDSN, postgres.Options{Host: "intruder"}); !errors.Is(err, clawledger.ErrReadOnly) ||
		!strings.Contains(err.Error(), "role "+vars["reader"]+" may only read it") {
		t.Errorf("the reader opened the ledger to write: %v", err)
	}
	// a report with the reader's URL answers from the ledger as it is: its
	// refresh (which would write) is skipped
	loc, err := clawledger.ParseLocation(readerDSN)
	check(t, err)
	svc := &ledger.Service{Location: loc, Name: "test", StateDirs: func() ([]string, error) { return fixtures(t)["sample"], nil }}
	defer svc.Close()
	if ss, err := svc.Sessions(ctx, ledger.SessionsRequest{Refresh: ledger.Refresh{Ingest: true}}); err != nil || len(ss.Sessions) == 0 {
		t.Errorf("a report with the reader's URL: %+v, %v", ss, err)
	}
	conn, err := pgx.Connect(ctx, admin)
	check(t, err)
	defer conn.Close(ctx)
	var hosts int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM t_`+suffix+`.hosts`).Scan(&hosts); err != nil || hosts != 1 {
		t.Errorf("the reader registered its host: %d hosts (%v)", hosts, err)
	}
	// a read-only session (a standby answers the same) is read-only too
	ro, err := url.Parse(writerDSN)
	check(t, err)
	params := ro.Query()
	params.Set("default_transaction_read_only", "on")
	ro.RawQuery = params.Encode()
	if _, err := postgres.Open(ctx, ro.String(), postgres.Options{Host: "h"}); !errors.Is(err, clawledger.ErrReadOnly) ||
		!strings.Contains(err.Error(), "the session is read-only") {
		t.Errorf("the writer in a read-only session: %v", err)
	}
	for _, stmt := range []string{
		`INSERT INTO t_` + suffix + `.hosts(name) VALUES ('x')`,
		`DELETE FROM t_` + suffix + `.lines`,
		`UPDATE t_` + suffix + `.sources SET size = 0`,
		`SELECT * FROM t_` + suffix + `.episodic_capture_sources`,
		`SELECT * FROM t_` + suffix + `.audit_salt`,
	} {
		if err := execAs(admin, vars["reader"], stmt); !denied(err) {
			t.Errorf("the reader ran %s: %v", stmt, err)
		}
	}
}

// execAs runs a statement as a role (SET ROLE on an admin session).
func execAs(dsn, role, stmt string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET ROLE "`+role+`"`); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, stmt)
	return err
}

// denied reports whether err is PostgreSQL's insufficient_privilege.
func denied(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42501"
}
