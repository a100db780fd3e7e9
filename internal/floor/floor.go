// Package floor is the storage floor of the ingest benchmark: it walks a
// tree, reads every *.jsonl file line by line and inserts each line's bytes
// into a one-table SQLite database with one prepared statement in large
// transactions — what any ledger must at least do, with nothing derived.
package floor

import (
	"bufio"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawledger/clawledger/internal/sqlitedriver"
)

// Run stores every line of every *.jsonl file under root into a new
// one-table database at dbPath and returns the number of lines and bytes.
// pageSize 0 keeps SQLite's default.
func Run(dbPath, root string, pageSize int) (lines, bytes int64, err error) {
	err = run(dbPath, root, pageSize, &lines, &bytes)
	return lines, bytes, err
}

func run(dbPath, root string, pageSize int, lines, bytes *int64) error {
	db, err := sql.Open(sqlitedriver.Name, sqlitedriver.DSN(dbPath))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	pragmas := []string{"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"}
	if pageSize > 0 {
		pragmas = append([]string{fmt.Sprintf("PRAGMA page_size = %d", pageSize)}, pragmas...)
	}
	for _, p := range append(pragmas, `CREATE TABLE IF NOT EXISTS lines(file TEXT NOT NULL, offset INTEGER NOT NULL, raw BLOB NOT NULL)`) {
		if _, err := db.Exec(p); err != nil {
			return err
		}
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	stmt, err := tx.Prepare(`INSERT INTO lines(file, offset, raw) VALUES(?, ?, ?)`)
	if err != nil {
		return err
	}
	var inTx int64
	buf := make([]byte, 1<<20)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(buf, 128<<20)
		var off int64
		for sc.Scan() {
			line := sc.Bytes()
			if _, err := stmt.Exec(path, off, line); err != nil {
				return err
			}
			*lines++
			off += int64(len(line)) + 1
			inTx += int64(len(line)) + 1
		}
		if err := sc.Err(); err != nil {
			return err
		}
		*bytes += off
		if inTx > 64<<20 {
			if err := tx.Commit(); err != nil {
				return err
			}
			if tx, err = db.Begin(); err != nil {
				return err
			}
			if stmt, err = tx.Prepare(`INSERT INTO lines(file, offset, raw) VALUES(?, ?, ?)`); err != nil {
				return err
			}
			inTx = 0
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return nil
}
