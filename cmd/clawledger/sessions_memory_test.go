package main

import (
	"bytes"
	"testing"

	"github.com/clawledger/clawledger/view"
)

// TestPrintMemoryEntries: under the sessions table, the memory entries
// that came from the sessions, one a line, their text on one line and
// sanitized; nothing when none did.
func TestPrintMemoryEntries(t *testing.T) {
	at := "2026-11-21T10:43:54.299Z"
	list := []view.Session{
		{SessionID: "7f49174a-653f-4b4f-aaf9-bc6994546069", MemoryEntries: []view.MemoryEntry{
			{Key: "memory:claim:ada70793f202", OriginClass: "owner", ObservedAt: &at, Path: "memory/.dreams/session-corpus/2026-11-21.txt",
				StartLine: 1, EndLine: 1, Text: "User: Write a deploy\nchecklist \x1b[31mnow"},
			{Key: "memory:memory/2026-11-20.md:3:5", OriginClass: "agent", ObservedAt: &at, Path: "memory/2026-11-20.md", StartLine: 3, EndLine: 5},
			{Key: "memory:claim:6c4d73b41692", OriginClass: "agent", ObservedAt: &at},
		}},
		{SessionID: "c7e71d20-7faa-4036-8426-8585f8e74bc8"},
	}
	var out bytes.Buffer
	(&app{stdout: &out}).printMemoryEntries(list)
	want := "\nmemory entries from these sessions (OpenClaw's memory_entry_origins):\n" +
		"  7f49174a-653f  owner      memory/.dreams/session-corpus/2026-11-21.txt:1  User: Write a deploy checklist ␛[31mnow\n" +
		"  7f49174a-653f  agent      memory/2026-11-20.md:3-5\n" +
		"  7f49174a-653f  agent      memory:claim:6c4d73b41692\n"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
	out.Reset()
	(&app{stdout: &out}).printMemoryEntries(list[1:])
	if out.Len() != 0 {
		t.Errorf("no entries: %q", out.String())
	}
}
