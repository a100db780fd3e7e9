package ledger

import (
	"testing"
	"time"

	"github.com/clawledger/clawledger"
)

// TestParseTimeMs: epoch milliseconds as they are, a date of 8 digits as a
// date, everything else as ParseTime reads it.
func TestParseTimeMs(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"", 0},
		{"1773480001000", 1773480001000},
		{" 1773480001000 ", 1773480001000},
		{"20260314", time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC).UnixMilli()},
		{"2026-03-14T10:00:00Z", time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC).UnixMilli()},
		{"2d", now.Add(-48 * time.Hour).UnixMilli()},
	} {
		got, err := ParseTimeMs(tc.in, now, time.UTC)
		if err != nil || got != tc.want {
			t.Errorf("ParseTimeMs(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseTimeMs("soonish", now, time.UTC); clawledger.ErrorCode(err) != clawledger.EINVALID {
		t.Errorf("ParseTimeMs(soonish): %v, want an invalid time", err)
	}
}
