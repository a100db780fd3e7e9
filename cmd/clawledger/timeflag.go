package main

import (
	"strconv"
	"strings"
	"time"
)

// parseTime reads a --since/--until value: an RFC 3339 time, a date
// (YYYY-MM-DD, midnight in loc), or an age such as 30m, 12h, 7d or 2w.
func parseTime(s string, now time.Time, loc *time.Location) (int64, error) {
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
	return 0, usagef("cannot read time %q: use YYYY-MM-DD, an RFC 3339 time, or an age like 12h, 7d", s)
}

// parseRange reads --since and --until in loc. A bare date in --until
// includes that whole day, as ccusage's does. Every command
// with --since and --until reads them this way.
func parseRange(since, until string, now time.Time, loc *time.Location) (from, to int64, err error) {
	if from, err = parseTime(since, now, loc); err != nil {
		return 0, 0, err
	}
	if to, err = parseTime(until, now, loc); err != nil {
		return 0, 0, err
	}
	u := strings.TrimSpace(until)
	for _, layout := range []string{"2006-01-02", "20060102"} {
		if d, perr := time.ParseInLocation(layout, u, loc); perr == nil {
			to = d.AddDate(0, 0, 1).UnixMilli()
		}
	}
	if from > 0 && to > 0 && to <= from {
		return 0, 0, usagef("--until %s is not after --since %s", until, since)
	}
	return from, to, nil
}
