package report

import (
	"fmt"
	"strings"
	"time"
)

// Period is how a usage report groups messages in time.
type Period string

const (
	Daily   Period = "daily"
	Weekly  Period = "weekly"
	Monthly Period = "monthly"
)

// ParsePeriod reads daily, weekly or monthly.
func ParsePeriod(s string) (Period, error) {
	switch p := Period(s); p {
	case Daily, Weekly, Monthly:
		return p, nil
	}
	return "", fmt.Errorf("unknown period %q (daily, weekly or monthly)", s)
}

// Bucket returns the key of the period holding ts (epoch ms) in loc:
// "2006-01-02" for a day, the date its week starts on (weekStart) for a
// week, "2006-01" for a month. These are ccusage's keys.
func Bucket(p Period, ts int64, loc *time.Location, weekStart time.Weekday) string {
	t := time.UnixMilli(ts).In(loc)
	switch p {
	case Weekly:
		back := (int(t.Weekday()) - int(weekStart) + 7) % 7
		return t.AddDate(0, 0, -back).Format("2006-01-02")
	case Monthly:
		return t.Format("2006-01")
	}
	return t.Format("2006-01-02")
}

// ParseWeekday reads a day name (sunday, monday, ...; three letters suffice).
func ParseWeekday(s string) (time.Weekday, error) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := d.String()
		if len(s) >= 3 && len(s) <= len(name) && strings.EqualFold(name[:len(s)], s) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown weekday %q", s)
}
