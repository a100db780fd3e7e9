package collect

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/openclaw/archive"
)

// FileState says how a source's file compares with what its cursor
// recorded at the last ingest.
type FileState string

const (
	FileOK         FileState = "ok"
	FileGrown      FileState = "grown"      // new bytes after the cursor: the next ingest reads them
	FileChanged    FileState = "changed"    // size or mtime differ: the next ingest looks again
	FileUnread     FileState = "unread"     // never read, or its last read failed (a corrupt index)
	FileMissing    FileState = "missing"    // vanished: the next ingest flags it gone (its rows stay)
	FileRewritten  FileState = "rewritten"  // committed bytes differ: the next ingest re-reads it and replaces its rows
	FileAltered    FileState = "altered"    // committed bytes differ where an ingest does not look (between the first and last KiB)
	FileUnreadable FileState = "unreadable" // cannot be opened or read
)

// Mismatch reports whether the ledger no longer holds what the file holds
// (as opposed to the file merely having moved on since the last ingest).
func (s FileState) Mismatch() bool {
	return s == FileRewritten || s == FileAltered || s == FileUnreadable
}

// FileCheck is what CheckFile found.
type FileCheck struct {
	State  FileState
	Detail string
	Hashed int64 // bytes read to verify the fingerprint
}

// CheckCursor compares a line-based source's cursor with the lines the
// ledger stores for it (lines, their numbering, malformed ones, and for a
// file their bytes back to back from byte 0 up to the offset); it returns
// what disagrees, or "".
func CheckCursor(src *clawledger.Source, lines, maxLineNo, malformed, bytes, noBytes int64) string {
	var problems []string
	c := &src.Cursor
	if lines != c.Lines {
		problems = append(problems, fmt.Sprintf("the cursor counts %d lines, the ledger holds %d", c.Lines, lines))
	}
	if maxLineNo != lines {
		problems = append(problems, fmt.Sprintf("line numbers run to %d over %d lines", maxLineNo, lines))
	}
	if malformed != c.Malformed {
		problems = append(problems, fmt.Sprintf("the cursor counts %d malformed lines, the ledger holds %d", c.Malformed, malformed))
	}
	// a database source's offset is an event seq, not a byte count
	if _, _, inDB := openclaw.SplitDatabaseRel(src.Rel); !inDB && noBytes == 0 && bytes != c.Offset {
		problems = append(problems, fmt.Sprintf("the stored lines end at byte %d, the cursor at %d", bytes, c.Offset))
	}
	return strings.Join(problems, "; ")
}

// CheckFile compares a present source's file with its cursor: device and
// inode, size and mtime, and for line-based sources the sha256 of the first
// KiB and of the KiB before the offset, and with deep the running sha256 of
// every committed byte (of a zstd archive: of its decompressed bytes). A
// source held in an OpenClaw database is checked for its database file
// only, and an archive stored from a database row not at all. It never
// writes.
func CheckFile(fsys openclaw.FS, src *clawledger.Source, deep bool) FileCheck {
	if dbRel, _, ok := openclaw.SplitDatabaseRel(src.Rel); ok {
		if _, _, err := openclaw.Confine(fsys, src.StateDir).Resolve(filepath.Join(src.StateDir, filepath.FromSlash(dbRel))); errors.Is(err, fs.ErrNotExist) {
			return FileCheck{State: FileMissing, Detail: "its database vanished since the last ingest; the next ingest flags it gone and keeps its lines"}
		}
		return FileCheck{State: FileOK}
	}
	if c := &src.Cursor; hasContent(src) && c.Dev == 0 && c.Inode == 0 && c.MtimeNs == 0 {
		return FileCheck{State: FileOK} // an archive stored from its database row: no file of its own
	}
	archived := strings.HasSuffix(src.Rel, ".zst")
	cf := openclaw.Confine(fsys, src.StateDir)
	if strings.HasPrefix(src.Rel, "../") { // a workspace the config places outside the state dir
		cf = openclaw.ConfineStateDir(fsys, src.StateDir)
	}
	f, _, err := cf.Open(filepath.Join(src.StateDir, filepath.FromSlash(src.Rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist) && archived:
		return FileCheck{State: FileOK} // an archive stored from a database row may have no file
	case errors.Is(err, fs.ErrNotExist):
		return FileCheck{State: FileMissing, Detail: "the file vanished since the last ingest; the next ingest flags it gone and keeps its lines"}
	case err != nil:
		return FileCheck{State: FileUnreadable, Detail: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return FileCheck{State: FileUnreadable, Detail: err.Error()}
	}
	if archived {
		return checkArchive(f, fi, src, deep)
	}
	c := &src.Cursor
	if src.Kind.HasLines() && (c.Offset > 0 || c.Lines > 0) {
		if fi.Size() < c.Offset {
			return FileCheck{State: FileRewritten, Detail: fmt.Sprintf("the file shrank to %d bytes below the %d bytes ingested", fi.Size(), c.Offset)}
		}
		head := min(c.Offset, headBytes)
		chk := FileCheck{Hashed: 2 * head}
		switch {
		case !bytes.Equal(hashRange(f, 0, head), c.HeadHash):
			chk.State, chk.Detail = FileRewritten, "its first KiB changed since it was ingested"
			return chk
		case !bytes.Equal(hashRange(f, c.Offset-head, head), c.TailHash):
			chk.State, chk.Detail = FileRewritten, fmt.Sprintf("the KiB before byte %d (the end of the last line ingested) changed", c.Offset)
			return chk
		case deep && len(c.PrefixHash) > 0:
			chk.Hashed += c.Offset
			if !prefixMatches(f, c) {
				chk.State, chk.Detail = FileAltered, fmt.Sprintf("the %d bytes ingested no longer hash the same, though their first and last KiB do: the file was altered in place", c.Offset)
				return chk
			}
		}
		if fi.Size() > c.Size {
			chk.State, chk.Detail = FileGrown, fmt.Sprintf("%d new bytes since the last ingest", fi.Size()-c.Size)
			return chk
		}
		if fi.ModTime().UnixNano() != c.MtimeNs || fi.Size() != c.Size {
			chk.State, chk.Detail = FileChanged, "modified since the last ingest"
			return chk
		}
		chk.State = FileOK
		return chk
	}
	switch {
	case c.MtimeNs == 0:
		return FileCheck{State: FileUnread, Detail: "not read yet, or its last read failed (an ingest says why in its warnings)"}
	case fi.Size() != c.Size || fi.ModTime().UnixNano() != c.MtimeNs:
		return FileCheck{State: FileChanged, Detail: "modified since the last ingest"}
	}
	return FileCheck{State: FileOK}
}

// checkArchive compares a zstd archive file with its cursor: its size and
// mtime, and with deep its decompressed bytes against the running hash.
func checkArchive(f io.Reader, fi fs.FileInfo, src *clawledger.Source, deep bool) FileCheck {
	c := &src.Cursor
	if fi.Size() != c.Size || fi.ModTime().UnixNano() != c.MtimeNs {
		return FileCheck{State: FileChanged, Detail: "modified since the last ingest"}
	}
	if !deep || len(c.PrefixHash) == 0 {
		return FileCheck{State: FileOK}
	}
	zr, err := archive.NewReader(f)
	if err != nil {
		return FileCheck{State: FileUnreadable, Detail: err.Error()}
	}
	defer zr.Close()
	same, err := sameStream(zr, c)
	switch {
	case err != nil:
		return FileCheck{State: FileUnreadable, Detail: err.Error(), Hashed: c.Offset}
	case !same:
		return FileCheck{State: FileAltered, Detail: "its decompressed bytes no longer hash to what was ingested", Hashed: c.Offset}
	}
	return FileCheck{State: FileOK, Hashed: c.Offset}
}

// CheckStoredLines hashes the lines the ledger holds for a source (each
// line's bytes and its newline, in order) and compares the sum with the
// cursor's running sha256 of the bytes it committed. read streams the
// lines and returns the source as of the same snapshot of the ledger, so a
// write in between cannot make them disagree. checked is false when there
// is nothing to compare with: a source never read, or one with a line over
// MaxLineBytes, stored without its bytes.
func CheckStoredLines(read func(line func(*clawledger.Line) error) (*clawledger.Source, error)) (ok, checked bool, err error) {
	h := prefixHash(nil)
	src, err := read(func(l *clawledger.Line) error {
		h.Write(l.Raw)
		h.Write(newline)
		return nil
	})
	if err != nil {
		return false, false, err
	}
	if len(src.Cursor.PrefixHash) == 0 {
		return true, false, nil
	}
	want := prefixHash(src.Cursor.PrefixHash)
	if want == nil {
		return false, true, nil // a running hash that does not even decode
	}
	return bytes.Equal(h.Sum(nil), want.Sum(nil)), true, nil
}
