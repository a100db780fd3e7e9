package ledger

import (
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/report"
)

// TestUsageGroupOrder: the totals of the same groups are the same float
// whatever order a store returns them in (float addition is not
// associative: 0.1+0.2+0.3 is not 0.3+0.2+0.1).
func TestUsageGroupOrder(t *testing.T) {
	a := []clawledger.UsageGroup{
		{Start: 1, Model: "m", Cost: 0.1, Messages: 1},
		{Start: 2, Model: "m", Cost: 0.2, Messages: 1},
		{Start: 2, Model: "n", Cost: 0.3, Messages: 1},
	}
	b := []clawledger.UsageGroup{a[2], a[1], a[0]}
	if x, y, z := a[0].Cost, a[1].Cost, a[2].Cost; (x+y)+z == (z+y)+x {
		t.Fatal("the fixture's sums no longer differ by order")
	}
	total := func(groups []clawledger.UsageGroup) float64 {
		orderUsageGroups(groups)
		rep := report.NewUsageReport()
		for i := range groups {
			rep.Add("all", &groups[i])
		}
		return rep.Totals.Cost
	}
	if x, y := total(a), total(b); x != y {
		t.Fatalf("totals differ by order: %v against %v", x, y)
	}
}
