package ledger

import (
	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// checkLimit fails on a negative limit (0 is no limit).
func checkLimit(limit int) error {
	if limit < 0 {
		return clawledger.FieldErrorf("limit", "must not be negative (0: no limit), not %d", limit)
	}
	return nil
}

// probeLimit is the limit a list asks of the store: one more than limit
// says whether there are more (0: all).
func probeLimit(limit int) int {
	if limit > 0 {
		return limit + 1
	}
	return 0
}

// nextCursor is the cursor of the page after list (its last row's
// keyset), when more rows matched; "" on the last page.
func nextCursor[T any](list []T, more bool, key func(T) clawledger.Keyset) string {
	if !more || len(list) == 0 {
		return ""
	}
	return view.NextCursor(key(list[len(list)-1]))
}

// cut keeps the first limit of a list probeLimit asked for (all with 0)
// and says whether there were more.
func cut[T any](list []T, limit int) ([]T, bool) {
	if limit > 0 && len(list) > limit {
		return list[:limit], true
	}
	return list, false
}
