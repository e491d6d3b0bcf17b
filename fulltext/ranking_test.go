package fulltext

import (
	"fmt"
	"slices"
	"testing"
)

// sampleMemories is a small, hand-written memory set for one user, in the style agents write.
// It includes traps for stemming ("universe"/"university", "news"/"new", "organ"/"organization")
// so the comparison is not rigged in its favour.
var sampleMemories = []Doc{
	{ID: "m01", Text: "User prefers to be called Sam and works as a backend engineer."},
	{ID: "m02", Text: "Sam deployed the payments service to production on Friday evening."},
	{ID: "m03", Text: "Deployment of the search cluster failed because the disk was full."},
	{ID: "m04", Text: "Sam is allergic to peanuts; avoid recommending Thai dishes with peanut sauce."},
	{ID: "m05", Text: "User's daughter starts university in Edinburgh in September."},
	{ID: "m06", Text: "Sam enjoys documentaries about the universe and black holes."},
	{ID: "m07", Text: "The team is migrating from MySQL to PostgreSQL next quarter.", Entities: []string{"MySQL", "PostgreSQL"}},
	{ID: "m08", Text: "Sam asked for a summary of the latest news about interest rates."},
	{ID: "m09", Text: "User bought a new bicycle and rides to work twice a week."},
	{ID: "m10", Text: "Reminder: renew the passport before the trip to Japan in April.", Entities: []string{"Japan"}},
	{ID: "m11", Text: "Sam's manager is Priya; weekly one-on-one meetings happen on Tuesdays.", Entities: []string{"Priya"}},
	{ID: "m12", Text: "Sam plays the church organ on Sundays."},
	{ID: "m13", Text: "The organization reorganized engineering into platform and product groups."},
	{ID: "m14", Text: "User is training for a half marathon and runs every morning."},
	{ID: "m15", Text: "Running shoes were replaced after knee pain in March."},
	{ID: "m16", Text: "Sam dislikes long meetings and prefers written updates."},
	{ID: "m17", Text: "The on-call rotation changes every Monday; Sam is on call this week."},
	{ID: "m18", Text: "Sam's cat is named Miso and needs medication twice daily.", Entities: []string{"Miso"}},
	{ID: "m19", Text: "Payment retries were added to the checkout flow after failed charges."},
	{ID: "m20", Text: "User wants recipes that are vegetarian and quick to cook."},
	{ID: "m21", Text: "Sam cooked a vegetarian lasagna for the family dinner."},
	{ID: "m22", Text: "The flight to Tokyo was booked for April 12 with a window seat.", Entities: []string{"Tokyo", "Japan"}},
	{ID: "m23", Text: "Sam is learning Japanese using a spaced repetition app."},
	{ID: "m24", Text: "Database backups run nightly at 02:00 UTC to an S3 bucket."},
	{ID: "m25", Text: "The backup job for the analytics database failed twice last week."},
	{ID: "m26", Text: "User prefers dark mode in every editor and terminal."},
	{ID: "m27", Text: "Sam writes Go and Rust; prefers Go for network services."},
	{ID: "m28", Text: "Code review comments should be direct but kind."},
	{ID: "m29", Text: "Sam's partner Alex is a nurse working night shifts.", Entities: []string{"Alex"}},
	{ID: "m30", Text: "Alex and Sam are planning a kitchen renovation this summer.", Entities: []string{"Alex"}},
	{ID: "m31", Text: "The renovation budget is capped at twenty thousand euros."},
	{ID: "m32", Text: "Sam reads science fiction, especially novels by Ursula Le Guin."},
	{ID: "m33", Text: "A new intern joins the platform team next month."},
	{ID: "m34", Text: "Sam's laptop battery drains quickly; a replacement was ordered."},
	{ID: "m35", Text: "The payments API latency spiked during the Black Friday sale."},
	{ID: "m36", Text: "User meditates for ten minutes before starting work."},
	{ID: "m37", Text: "Sam volunteers at the food bank on the first Saturday of each month."},
	{ID: "m38", Text: "The deploy pipeline now requires two approvals for production."},
	{ID: "m39", Text: "Sam's knee injury means no running for three weeks."},
	{ID: "m40", Text: "Universal credit paperwork for Sam's mother is due in May."},
}

// sampleQueries are what an agent might ask, with the memories a person judged relevant.
var sampleQueries = []judgedQuery{
	{"when did sam deploy payments", []string{"m02", "m38"}},
	{"deployment failures", []string{"m03", "m25"}},
	{"food allergies", []string{"m04"}},
	{"daughter university", []string{"m05"}},
	{"universe documentaries", []string{"m06"}},
	{"database migration plans", []string{"m07"}},
	{"latest news", []string{"m08"}},
	{"trip to japan", []string{"m10", "m22"}},
	{"meetings with manager", []string{"m11", "m16"}},
	{"organ music", []string{"m12"}},
	{"organization restructuring", []string{"m13"}},
	{"running injuries", []string{"m15", "m39"}},
	{"vegetarian cooking", []string{"m20", "m21"}},
	{"backups failing", []string{"m25", "m24"}},
	{"partner alex", []string{"m29", "m30"}},
	{"renovating the kitchen", []string{"m30", "m31"}},
	{"cats medication", []string{"m18"}},
	{"books sam reads", []string{"m32"}},
}

// rankingQuality returns MRR and recall@5 of an analyzer on the sample.
func rankingQuality(t *testing.T, analyzer string) (mrr, recall5 float64) {
	t.Helper()
	return rankingQualityOpts(t, Options{InMemory: true, Analyzer: analyzer})
}

// rankingQualityOpts is rankingQuality with any options.
func rankingQualityOpts(t *testing.T, opts Options) (mrr, recall5 float64) {
	t.Helper()
	return measureRanking(t, opts, "sam", sampleMemories, sampleQueries)
}

// judgedQuery is a query with the ids of the documents that answer it.
type judgedQuery struct {
	text     string
	relevant []string
}

// loadDocs opens an index with opts holding docs as memories of user.
func loadDocs(t *testing.T, opts Options, user string, docs []Doc) *Index {
	t.Helper()
	ix := openTest(t, "", opts)
	put := make([]Doc, len(docs))
	for i, d := range docs {
		d.UserID = user
		put[i] = d
	}
	mustApply(t, ix, put)
	return ix
}

// measureRanking returns the mean reciprocal rank of the first relevant hit and the mean recall@5 of queries
// over docs indexed with opts.
func measureRanking(t *testing.T, opts Options, user string, docs []Doc, queries []judgedQuery) (mrr, recall5 float64) {
	t.Helper()
	ix := loadDocs(t, opts, user, docs)
	for _, q := range queries {
		hits := mustSearch(t, ix, Query{UserID: user, Text: q.text, K: 5})
		found := 0
		for i, h := range hits {
			if slices.Contains(q.relevant, h.ID) {
				if found == 0 {
					mrr += 1 / float64(i+1)
				}
				found++
			}
		}
		recall5 += float64(found) / float64(len(q.relevant))
	}
	n := float64(len(queries))
	return mrr / n, recall5 / n
}

// TestAnalyzerChoice measures why AnalyzerEnglish is the default (figures in DESIGN.md).
func TestAnalyzerChoice(t *testing.T) {
	enMRR, enRecall := rankingQuality(t, AnalyzerEnglish)
	stdMRR, stdRecall := rankingQuality(t, AnalyzerStandard)
	t.Logf("en:       MRR %.3f  recall@5 %.3f", enMRR, enRecall)
	t.Logf("standard: MRR %.3f  recall@5 %.3f", stdMRR, stdRecall)
	if enMRR < stdMRR || enRecall < stdRecall {
		t.Errorf("default analyzer %q ranks worse than %q: %s", AnalyzerEnglish, AnalyzerStandard,
			fmt.Sprintf("MRR %.3f vs %.3f, recall@5 %.3f vs %.3f", enMRR, stdMRR, enRecall, stdRecall))
	}
}
