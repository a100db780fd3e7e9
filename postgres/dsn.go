package postgres

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clawledger/clawledger"
)

// parseDSN reads a connection string the way libpq does (pgx): TLS from
// sslmode, sslrootcert, sslcert and sslkey; the password from the DSN,
// else PGPASSWORD, else the password file (.pgpass, or PGPASSFILE). Its
// errors never show the password.
func parseDSN(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		msg := maskPassword(err.Error(), dsnPassword(dsn))
		return nil, clawledger.Errorf(clawledger.EINVALID, "%s: %s", maskDSN(dsn), msg)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "clawledger"
	}
	// pgx prepares each statement once per connection, and after five runs
	// PostgreSQL may plan it for any parameters: a word search then walks
	// every chunk newest first, however rare the word (600 ms where the
	// plan for the word takes 20). The queries are planned for their
	// values; planning them costs well under a millisecond. The writer's
	// batches are the exception (batchBegin).
	if _, ok := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !ok {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = customPlans
	}
	if cfg.MaxConns < 4 {
		cfg.MaxConns = 4
	}
	return cfg, nil
}

// customPlans is the plan_cache_mode of the store's connections unless
// the DSN sets one.
const customPlans = "force_custom_plan"

// batchBegin begins a write batch of the writer (batch.go) on a connection
// made with cfg. Its statements are the writer's own: inserts, upserts and
// updates by key, the reads of its bookkeeping by key, and what the
// ledger's triggers and foreign keys run for them, each with one plan
// whatever its values. Planned for their values every time (customPlans),
// they and the triggers' statements were 5% of the server's CPU in one
// host's ingest (docs/benchmarks.md, PostgreSQL "O"): a batch plans them
// as PostgreSQL does by default (auto: once per connection, unless the
// plan for the values is cheaper). Nothing else runs in a batch: the
// derived layers (the search index on the writer's first lane, the
// cortex on the pool) run in transactions of their own, planned for
// their values. A DSN's own plan_cache_mode is kept everywhere.
func batchBegin(cfg *pgx.ConnConfig) pgx.TxOptions {
	if cfg.RuntimeParams["plan_cache_mode"] != customPlans {
		return pgx.TxOptions{}
	}
	// one round trip: a query without arguments goes by the simple
	// protocol, which takes both statements
	return pgx.TxOptions{BeginQuery: "BEGIN; SET LOCAL plan_cache_mode = auto"}
}

// keywordPassword finds the password of a keyword/value DSN.
var keywordPassword = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// maskPassword masks the password pw wherever msg holds it. A password
// shorter than 4 characters is masked only where a connection string
// spells it (user:pw@, password=pw): masking every "r" of a message would
// garble it ("pexxxxxmission denied") and hide nothing.
func maskPassword(msg, pw string) string {
	switch {
	case pw == "":
		return msg
	case len(pw) >= 4:
		return strings.ReplaceAll(msg, pw, "xxxxx")
	}
	for _, spelled := range []string{pw, url.QueryEscape(pw), url.PathEscape(pw)} {
		msg = strings.ReplaceAll(msg, ":"+spelled+"@", ":xxxxx@")
	}
	return keywordPassword.ReplaceAllString(msg, "${1}xxxxx")
}

// maskDSN is a DSN for people: its password (in the URL's user info, a
// password= parameter or a keyword) masked.
func maskDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return clawledger.RedactURL(u)
	}
	return keywordPassword.ReplaceAllString(dsn, "${1}xxxxx")
}

// dsnPassword is the password a DSN spells out, if any.
func dsnPassword(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
		return u.Query().Get("password")
	}
	if m := keywordPassword.FindStringSubmatch(dsn); m != nil {
		return strings.Trim(m[2], "'")
	}
	return ""
}
