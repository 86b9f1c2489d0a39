package metrics_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// dashboard is the part of tools/grafana/hotkv-dashboard.json the test reads.
type dashboard struct {
	SchemaVersion int `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name, Type string
			Query      any
		}
	}
	Panels []panel
}

type panel struct {
	Type, Title string
	Datasource  *struct{ Type, UID string }
	Targets     []struct{ Expr string }
	Panels      []panel
}

// repoRoot is taken when the test binary starts: a server started with --dir changes the
// process's working directory, as Redis's dir does.
var repoRoot = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "..", "..")
}()

// metricName finds the metric names in a PromQL expression (every exported family starts with
// one of these prefixes; label names and functions do not).
var metricName = regexp.MustCompile(`\b(?:hotkv|go|process)_[a-z0-9_]+\b`)

// TestDashboardMetricsExist: the Grafana dashboard is Grafana 10's schema with a Prometheus
// datasource variable that every panel uses, and every metric its expressions name is on a
// real scrape (a histogram's or summary's _bucket, _sum and _count through its family).
func TestDashboardMetricsExist(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "tools/grafana/hotkv-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d: Grafana 10 writes 36 and later", d.SchemaVersion)
	}
	hasDS := false
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus" {
			hasDS = true
		}
	}
	if !hasDS {
		t.Error("no Prometheus datasource variable named datasource")
	}

	s, url := startWithMetrics(t)
	c := dial(t, s)
	c.pipeline("SET k v", "GET k", "GET missing", "LPUSH k x", "SETEX t 100 v")
	fams := scrape(t, url)

	var exprs int
	used := map[string]bool{}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q does not use the datasource variable", p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				exprs++
				for _, name := range metricName.FindAllString(tg.Expr, -1) {
					used[name] = true
					if !onScrape(fams, name) {
						t.Errorf("panel %q: %s is not on the scrape", p.Title, name)
					}
				}
			}
		}
	}
	walk(d.Panels)
	if exprs < 20 || len(used) < 30 {
		t.Errorf("%d expressions naming %d metrics: the dashboard lost panels", exprs, len(used))
	}
	for _, want := range []string{"hotkv_commands_total", "hotkv_command_duration_seconds_bucket",
		"hotkv_errors_total", "hotkv_memory_used_bytes", "hotkv_connected_clients", "hotkv_db_keys",
		"hotkv_keyspace_hits_total", "hotkv_evicted_keys_total", "hotkv_shard_busy_seconds_total",
		"hotkv_shard_queue_depth", "hotkv_rdb_changes_since_last_save"} {
		if !used[want] {
			t.Errorf("no panel uses %s", want)
		}
	}
}

// onScrape reports whether name is a family of the scrape, or a histogram's or summary's series.
func onScrape(fams map[string]*dto.MetricFamily, name string) bool {
	if fams[name] != nil {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok || fams[base] == nil {
			continue
		}
		switch fams[base].GetType() {
		case dto.MetricType_HISTOGRAM:
			return true
		case dto.MetricType_SUMMARY:
			return suffix != "_bucket"
		}
	}
	return false
}

// TestReadmeListsEveryMetric: the README's Metrics table names every hotkv_ family of a real
// scrape with its type, and nothing the scrape lacks.
func TestReadmeListsEveryMetric(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Metrics\n")
	if !ok {
		t.Fatal("README has no Metrics section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]string{} // name -> type
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > 3 && strings.HasPrefix(strings.TrimSpace(cells[1]), "hotkv_") {
			listed[strings.TrimSpace(cells[1])] = strings.TrimSpace(cells[2])
		}
	}
	s, url := startWithMetrics(t)
	dial(t, s).pipeline("SET k v", "GET k", "LPUSH k x")
	fams := scrape(t, url)
	for name, f := range fams {
		if !strings.HasPrefix(name, "hotkv_") {
			continue
		}
		typ, ok := listed[name]
		if !ok {
			t.Errorf("%s is not in the README", name)
		} else if want := strings.ToLower(f.GetType().String()); typ != want {
			t.Errorf("%s: the README says %s, the scrape %s", name, typ, want)
		}
	}
	for name := range listed {
		if fams[name] == nil {
			t.Errorf("the README lists %s, which the scrape lacks", name)
		}
	}
}
