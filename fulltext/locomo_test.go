package fulltext

import "testing"

// locomoMemories imitate the shape of LoCoMo (invented text, no dataset content): chat turns between two
// friends, each prefixed with the speaker, so the two names are in most docs, as a user's own name is in a real
// memory store.
var locomoMemories = []Doc{
	{ID: "c01", Text: "Priya: I joined a beekeeping club on Tuesday and the first meeting was fascinating."},
	{ID: "c02", Text: "Tomas: Nice, Priya! Bees always make me a little nervous though."},
	{ID: "c03", Text: "Priya: I've been studying solar panel installers, I want our roof to power the house."},
	{ID: "c04", Text: "Tomas: Solar is smart. Which installers did you compare?"},
	{ID: "c05", Text: "Priya: My study was mostly on installers that offer battery storage."},
	{ID: "c06", Text: "Tomas: I sketched the harbour at dawn yesterday, drawing helps me focus."},
	{ID: "c07", Text: "Priya: Your sketch is lovely, Tomas. The boats look so real."},
	{ID: "c08", Text: "Tomas: Thanks! We took the twins sailing on the fjord in August."},
	{ID: "c09", Text: "Priya: Sailing sounds wonderful. I went climbing in the quarry with coworkers."},
	{ID: "c10", Text: "Tomas: I started a woodworking course, I carved a spoon on the first evening."},
	{ID: "c11", Text: "Priya: I'm considering a move into nursing for elderly patients."},
	{ID: "c12", Text: "Tomas: You would make a caring nurse, Priya."},
	{ID: "c13", Text: "Priya: I gave a talk at the library about growing tomatoes on balconies."},
	{ID: "c14", Text: "Tomas: My son's birthday was on Friday, he turned nine."},
	{ID: "c15", Text: "Priya: Happy birthday to him! What did you give him?"},
	{ID: "c16", Text: "Tomas: We gave him a telescope, he wants to study planets."},
	{ID: "c17", Text: "Tomas: I play the cello, I learned it in secondary school."},
	{ID: "c18", Text: "Priya: I swam across the bay for a food bank fundraiser on Saturday."},
	{ID: "c19", Text: "Tomas: Impressive. How far was the swim?"},
	{ID: "c20", Text: "Priya: Two miles, and we collected donations for the food bank."},
	{ID: "c21", Text: "Tomas: I read a book about sleep science that changed my evenings."},
	{ID: "c22", Text: "Priya: Which book? I need something for the ferry."},
	{ID: "c23", Text: "Tomas: Priya, my parents came to the lantern festival with me this spring."},
	{ID: "c24", Text: "Priya: I loved the lantern festival, the whole town glowed."},
	{ID: "c25", Text: "Tomas: I'm sketching again, this time the old lighthouse on the cliff."},
	{ID: "c26", Text: "Priya: My neighbours cooked me a farewell lunch, it was very kind."},
	{ID: "c27", Text: "Tomas: Hey Priya, how was your week?"},
	{ID: "c28", Text: "Priya: Hi Tomas! Hectic, but fine. And you?"},
	{ID: "c29", Text: "Tomas: Fine, Priya, just worn out from the office."},
	{ID: "c30", Text: "Priya: Speak soon, Tomas, look after yourself!"},
}

var locomoQueries = []judgedQuery{
	{"What did Priya study?", []string{"c03", "c05"}},
	{"When did Tomas sketch the harbour?", []string{"c06"}},
	{"What instrument does Tomas play?", []string{"c17"}},
	{"Where did Tomas go sailing?", []string{"c08"}},
	{"What career is Priya considering?", []string{"c11"}},
	{"What did Tomas carve in woodworking course?", []string{"c10"}},
	{"What did Priya do for the food bank fundraiser?", []string{"c18", "c20"}},
	{"What did Tomas's son get for his birthday?", []string{"c16", "c14"}},
	{"Did Priya go to the lantern festival?", []string{"c24", "c23"}},
	{"What has Tomas sketched?", []string{"c06", "c25"}},
	{"Which club did Priya join?", []string{"c01"}},
	{"What book did Tomas read?", []string{"c21"}},
}

// TestRankingLoCoMoLike guards the common-terms split where it applies: forced on this 30-doc set,
// the speakers' names (in most docs) are common. It must not lower MRR or recall@5 against the
// unshaped query.
func TestRankingLoCoMoLike(t *testing.T) {
	measure := func(opts Options) (mrr, rec float64) {
		return measureRanking(t, opts, "u", locomoMemories, locomoQueries)
	}
	baseMRR, baseRec := measure(Options{InMemory: true, MaxQueryTerms: -1, CommonTermFraction: -1})
	mrr, rec := measure(Options{InMemory: true, CommonTermFraction: 0.1, CommonTermMinDF: -1})
	t.Logf("unshaped:     MRR %.3f  recall@5 %.3f", baseMRR, baseRec)
	t.Logf("forced split: MRR %.3f  recall@5 %.3f", mrr, rec)
	if mrr < baseMRR-1e-9 || rec < baseRec-1e-9 {
		t.Errorf("split lowered ranking quality: MRR %.3f vs %.3f, recall@5 %.3f vs %.3f", mrr, baseMRR, rec, baseRec)
	}
}
