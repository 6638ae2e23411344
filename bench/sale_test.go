package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// TestSaleTiny: 30 users waiting at the opening of 3 instances, then a short
// stage. On a serial store every ticket is admitted once, nobody is lost,
// atomic never lets the observer see more than the slot, and no user holds an
// admission beyond it; the --workers part runs the leader on both stores.
func TestSaleTiny(t *testing.T) {
	e := testEnv(t)
	p := DefaultSaleParams()
	p.Store = roomStore(t, e)
	p.Strategies, p.Instances, p.Slot, p.Users = []string{"atomic", "optimistic"}, []int{3}, 5, 30
	p.Session, p.Period, p.PollCap, p.Drain = 400*time.Millisecond, 50*time.Millisecond, 100*time.Millisecond, 30*time.Second
	p.Stages = []stage{{20, 500 * time.Millisecond}}
	p.BreakWorkers, p.BreakStrategies = 4, []string{"leader"}
	r, err := e.Sale(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	res := r.Results.(SaleResults)
	if len(res.Cells) != 2 {
		t.Fatalf("%d cells, want 2", len(res.Cells))
	}
	for _, c := range res.Cells {
		t.Logf("%+v", c)
		if c.Skipped != "" {
			t.Fatalf("%s skipped: %s", c.Strategy, c.Skipped)
		}
		if c.Users != 40 || c.Admitted != 40 || c.Lost != 0 || c.Duplicates != 0 || c.Errors != 0 || c.StillWaiting != 0 {
			t.Errorf("%s: users %d admitted %d lost %d duplicates %d errors %d (%s) still waiting %d",
				c.Strategy, c.Users, c.Admitted, c.Lost, c.Duplicates, c.Errors, c.FirstError, c.StillWaiting)
		}
		if c.ConfirmedOver != 0 {
			t.Errorf("%s: %d users held an admission beyond the slot", c.Strategy, c.ConfirmedOver)
		}
		if c.Strategy == "atomic" && (c.MaxObserved > int64(p.Slot) || c.MaxHeld > int64(p.Slot)) {
			t.Errorf("atomic: observer saw %d active (%d held), slot %d", c.MaxObserved, c.MaxHeld, p.Slot)
		}
		if len(c.Phases) != 3 || c.Phases[0].Name != "opening" || c.Phases[1].Rate != 20 {
			t.Errorf("%s: phases %+v, want opening, one stage, drain", c.Strategy, c.Phases)
		}
		sent := 0
		for _, ph := range c.Phases {
			sent += ph.Requests
		}
		if sent != c.Requests {
			t.Errorf("%s: phases count %d requests, the users sent %d", c.Strategy, sent, c.Requests)
		}
	}
	if len(res.Break) != 2 || res.Break[0].Workers != 1 || res.Break[1].Workers != 4 {
		t.Fatalf("workers runs %+v, want the leader on --workers 1 and 4", res.Break)
	}
	for _, c := range res.Break {
		if c.Admitted != 40 || c.Errors != 0 || c.Periods == 0 || len(c.InstanceAdmissions) != 3 {
			t.Errorf("leader on %s: admitted %d errors %d (%s) periods %d instance admissions %v",
				c.Store, c.Admitted, c.Errors, c.FirstError, c.Periods, c.InstanceAdmissions)
		}
	}
	checkWritten(t, r, "sale-active-3.png", "sale-max-active.png", "sale-latency-stages.png", "sale-workers-active.png")
}

func TestMaxHeld(t *testing.T) {
	var s []sample
	for i := range 1000 { // one sample per millisecond
		n := int64(50)
		switch {
		case i == 100:
			n = 150 // a spike of one read
		case i >= 400 && i < 700:
			n = 120 // a plateau of 300 ms
		case i >= 800 && i < 900:
			n = 130 // 100 ms: shorter than the window
		}
		s = append(s, sample{float64(i) / 1000, n})
	}
	for _, tc := range []struct {
		w    float64
		want int64
	}{{0.2, 120}, {0.05, 130}, {0, 150}, {2, 0}} {
		if got := maxHeld(s, tc.w); got != tc.want {
			t.Errorf("maxHeld(w=%v) = %d, want %d", tc.w, got, tc.want)
		}
	}
}

func TestScrapeMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `# HELP queue_admissions_total Users admitted.
# TYPE queue_admissions_total counter
queue_admissions_total{queue="a"} 12
queue_admissions_total{queue="b"} 99
queue_lost_leases_total{queue="a"} 2
go_goroutines 7
`)
	}))
	defer srv.Close()
	m, err := scrapeMetrics(context.Background(), srv.Client(), srv.URL, "a")
	if err != nil {
		t.Fatal(err)
	}
	if m["queue_admissions_total"] != 12 || m["queue_lost_leases_total"] != 2 || len(m) != 2 {
		t.Errorf("metrics %v", m)
	}
}

func TestMultiAdmitPeriods(t *testing.T) {
	s := scraper{series: [][]sample{
		{{0.05, 0}, {0.10, 5}, {0.30, 5}, {0.45, 9}}, // admits in bins 0 and 2
		{{0.05, 0}, {0.15, 3}, {0.30, 3}, {0.50, 3}}, // admits in bin 0
	}}
	periods, multi := s.multiAdmitPeriods(200 * time.Millisecond)
	if periods != 2 || multi != 1 {
		t.Errorf("periods %d, multi %d; want 2, 1", periods, multi)
	}
}

func TestCPUPlan(t *testing.T) {
	if got := expandCPUs("0-2,5"); !slices.Equal(got, []int{0, 1, 2, 5}) {
		t.Errorf("expandCPUs = %v", got)
	}
	off, err := PlanCPUs("off")
	if err != nil || off.Pinned {
		t.Errorf("off: %+v %v", off, err)
	}
	if _, err := PlanCPUs("sideways"); err == nil {
		t.Error("a bad mode was accepted")
	}
	auto, err := PlanCPUs("auto")
	if err != nil {
		t.Fatal(err)
	}
	if auto.Pinned {
		load, srv := expandCPUs(auto.LoadCPUs), expandCPUs(auto.ServerCPUs)
		if len(load) == 0 || len(srv) == 0 || len(load)+len(srv) != len(allowedCPUs) || slices.Contains(srv, load[0]) {
			t.Errorf("auto split %+v of %v", auto, allowedCPUs)
		}
	} else if len(allowedCPUs) > 1 && auto.How != "taskset not found" {
		t.Errorf("auto did not pin %d CPUs: %+v", len(allowedCPUs), auto)
	}
}
