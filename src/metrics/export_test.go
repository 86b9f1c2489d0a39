package metrics

// InfoTableRow is one INFO-derived metric, for the external tests.
type InfoTableRow struct{ Field, Metric string }

// InfoTable lists the INFO-derived metrics.
func InfoTable() []InfoTableRow {
	var out []InfoTableRow
	for _, im := range infoMetrics {
		out = append(out, InfoTableRow{im.field, im.name})
	}
	return out
}
