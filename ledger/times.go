package ledger

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/clawledger/clawledger"
)

// ParseTime reads a time as every surface takes it: an RFC 3339 time, a
// date (YYYY-MM-DD, midnight in loc), or an age such as 30m, 12h, 7d or
// 2w before now. "" is 0 (open).
func ParseTime(s string, now time.Time, loc *time.Location) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixMilli(), nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05", "20060102"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t.UnixMilli(), nil
		}
	}
	if n := len(s); n > 1 {
		unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[n-1]]
		if unit != 0 {
			if k, err := strconv.Atoi(s[:n-1]); err == nil {
				return now.Add(-time.Duration(k) * unit).UnixMilli(), nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d).UnixMilli(), nil
	}
	return 0, clawledger.Errorf(clawledger.EINVALID, "cannot read time %q: use YYYY-MM-DD, an RFC 3339 time, or an age like 12h, 7d", s)
}

// ParseTimeMs reads a time as the episodes commands take it: epoch
// milliseconds (more than 8 digits, so that a date like 20260314 stays a
// date), or what ParseTime takes.
func ParseTimeMs(s string, now time.Time, loc *time.Location) (int64, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && len(s) > 8 {
		return ms, nil
	}
	return ParseTime(s, now, loc)
}

// ErrEmptyRange is the reason of a range whose end is not after its start.
var ErrEmptyRange = errors.New("empty range")

// ParseRange reads a since/until pair in loc. A bare date as until
// includes that whole day (ccusage's reading): to is the next midnight.
func ParseRange(since, until string, now time.Time, loc *time.Location) (from, to int64, err error) {
	if from, err = ParseTime(since, now, loc); err != nil {
		return 0, 0, err
	}
	if to, err = ParseTime(until, now, loc); err != nil {
		return 0, 0, err
	}
	u := strings.TrimSpace(until)
	for _, layout := range []string{"2006-01-02", "20060102"} {
		if d, perr := time.ParseInLocation(layout, u, loc); perr == nil {
			to = d.AddDate(0, 0, 1).UnixMilli()
		}
	}
	if from > 0 && to > 0 && to <= from {
		return 0, 0, clawledger.Reasonf(clawledger.EINVALID, ErrEmptyRange, "until %s is not after since %s", until, since)
	}
	return from, to, nil
}
