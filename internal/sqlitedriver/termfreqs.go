//go:build !(cgo && sqlite_fts5)

package sqlitedriver

import (
	"encoding/binary"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// TermFreqs names an FTS5 auxiliary function, registered on every
// connection, that returns what BM25 needs of the current match without
// reading its text: the length of column 0 in tokens (FTS5's document
// size), then each query phrase's number of instances in the row, in the
// order of the MATCH expression, as little-endian uint32s (DecodeTermFreqs
// reads them). FTS5 has them at hand for every match (its position
// lists and %_docsize); the alternative, joining each match to its text
// and tokenizing it again, cost most of a search for a mid-frequency word.
// Given a second argument, the match's row of search_lengths (joined on
// rowid / LengthBlock), it reads the length there (BlockLength), and asks
// FTS5 only for a length the row lacks: FTS5 reads its %_docsize with a
// statement of its own per match, which cost half of a search.
// Empty when the driver has no such function (the cgo build, or a failed
// registration).
var TermFreqs string

// The function is added to every connection by an auto extension, the
// way modernc.org/sqlite/vec adds sqlite-vec.
func init() {
	tls := libc.NewTLS()
	defer tls.Close()
	if sqlite3.Xsqlite3_auto_extension(tls, cFuncPointer(termFreqsInit)) == sqlite3.SQLITE_OK {
		TermFreqs = termFreqsName
	}
}

const termFreqsName = "clawledger_tf"

// cFuncPointer turns a top-level Go function of the C signature into a
// function pointer of the translated C code, as modernc.org/sqlite does
// for its own callbacks (https://golang.org/s/go11func).
func cFuncPointer[T any](f T) uintptr {
	return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f}))
}

// cptr is the C address p (memory of the translated C code, outside Go's
// heap) as a pointer.
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// apiQuery returns the connection's fts5_api when a pointer is bound.
const apiQuery = "SELECT fts5(?1)"

// termFreqsInit is the auto extension: it looks up the connection's
// fts5_api (SELECT fts5(?1) with a pointer bound) and adds the function.
func termFreqsInit(tls *libc.TLS, db, pzErrMsg, pThunk uintptr) int32 {
	query, err := libc.CString(apiQuery)
	if err != nil {
		return sqlite3.SQLITE_NOMEM
	}
	defer libc.Xfree(tls, query)
	ptrType, err := libc.CString("fts5_api_ptr")
	if err != nil {
		return sqlite3.SQLITE_NOMEM
	}
	defer libc.Xfree(tls, ptrType)
	name, err := libc.CString(termFreqsName)
	if err != nil {
		return sqlite3.SQLITE_NOMEM
	}
	defer libc.Xfree(tls, name)

	bp := tls.Alloc(16) // the statement, then the fts5_api pointer
	defer tls.Free(16)
	*(*uintptr)(cptr(bp)) = 0
	*(*uintptr)(cptr(bp + 8)) = 0
	// Preparing reads the schema. On a damaged database (or one locked
	// while it opens) that fails: the connection then opens without the
	// function, its error cleared (an empty exec resets it), and the open's
	// caller meets the damage as it would without this extension.
	if sqlite3.Xsqlite3_prepare_v2(tls, db, query, -1, bp, 0) != sqlite3.SQLITE_OK {
		sqlite3.Xsqlite3_exec(tls, db, query+uintptr(len(apiQuery)), 0, 0, 0)
		return sqlite3.SQLITE_OK
	}
	stmt := *(*uintptr)(cptr(bp))
	sqlite3.Xsqlite3_bind_pointer(tls, stmt, 1, bp+8, ptrType, 0)
	sqlite3.Xsqlite3_step(tls, stmt)
	sqlite3.Xsqlite3_finalize(tls, stmt)
	api := *(*uintptr)(cptr(bp + 8))
	if api == 0 {
		return sqlite3.SQLITE_OK
	}
	create := (*sqlite3.Tfts5_api)(cptr(api)).FxCreateFunction
	return (*(*func(*libc.TLS, uintptr, uintptr, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&create)))(
		tls, api, name, 0, cFuncPointer(termFreqs), 0)
}

// maxPhrases bounds the phrases counted (the rest read as 0).
const maxPhrases = 64

// termFreqs is the auxiliary function (fts5_extension_function).
func termFreqs(tls *libc.TLS, pApi, pFts, pCtx uintptr, nVal int32, apVal uintptr) {
	api := (*sqlite3.TFts5ExtensionApi)(cptr(pApi))
	phrases := min(call1(tls, api.FxPhraseCount, pFts), maxPhrases)
	size := 4 * (1 + int(phrases))
	bp := tls.Alloc(16 + size) // three ints for xInst, then the result
	defer tls.Free(16 + size)
	out := unsafe.Slice((*byte)(cptr(bp+16)), size)
	clear(out)
	fail := func(rc int32) { sqlite3.Xsqlite3_result_error_code(tls, pCtx, rc) }
	if length, ok := blockArg(tls, api, pFts, nVal, apVal); ok {
		binary.LittleEndian.PutUint32(out, uint32(length))
	} else if rc := call3(tls, api.FxColumnSize, pFts, 0, bp); rc != sqlite3.SQLITE_OK {
		fail(rc)
		return
	} else {
		binary.LittleEndian.PutUint32(out, uint32(*(*int32)(cptr(bp))))
	}
	if rc := call2(tls, api.FxInstCount, pFts, bp); rc != sqlite3.SQLITE_OK {
		fail(rc)
		return
	}
	n := *(*int32)(cptr(bp))
	for i := range n {
		if rc := call5(tls, api.FxInst, pFts, i, bp, bp+4, bp+8); rc != sqlite3.SQLITE_OK {
			fail(rc)
			return
		}
		if p := *(*int32)(cptr(bp)); p >= 0 && p < phrases {
			k := 4 * (1 + int(p))
			binary.LittleEndian.PutUint32(out[k:], binary.LittleEndian.Uint32(out[k:])+1)
		}
	}
	sqlite3.Xsqlite3_result_blob(tls, pCtx, bp+16, int32(size), ^uintptr(0)) // SQLITE_TRANSIENT: copied
}

// blockArg reads the current row's length from the function's first
// argument, its row of search_lengths, if it was given one that has it.
func blockArg(tls *libc.TLS, api *sqlite3.TFts5ExtensionApi, pFts uintptr, nVal int32, apVal uintptr) (int, bool) {
	if nVal < 1 {
		return 0, false
	}
	v := *(*uintptr)(cptr(apVal))
	n := sqlite3.Xsqlite3_value_bytes(tls, v)
	if sqlite3.Xsqlite3_value_type(tls, v) != sqlite3.SQLITE_BLOB || n <= 0 {
		return 0, false
	}
	fn := api.FxRowid
	rowid := (*(*func(*libc.TLS, uintptr) int64)(unsafe.Pointer(&fn)))(tls, pFts)
	return BlockLength(unsafe.Slice((*byte)(cptr(sqlite3.Xsqlite3_value_blob(tls, v))), n), rowid)
}

// The calls of Fts5ExtensionApi's methods, by their C signatures.

func call1(tls *libc.TLS, fn, pFts uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&fn)))(tls, pFts)
}

func call2(tls *libc.TLS, fn, pFts, p uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&fn)))(tls, pFts, p)
}

func call3(tls *libc.TLS, fn, pFts uintptr, i int32, p uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&fn)))(tls, pFts, i, p)
}

func call5(tls *libc.TLS, fn, pFts uintptr, i int32, p1, p2, p3 uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, int32, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&fn)))(tls, pFts, i, p1, p2, p3)
}
