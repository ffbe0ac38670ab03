package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// exportDoc exports workspace ws as ctx's caller and decodes the document, returning its
// text too.
func exportDoc(t *testing.T, env *testkit.Env, ctx context.Context, ws string, opts data.ExportOptions) (*data.WorkspaceExport, string) {
	t.Helper()
	stream, err := env.Svc.Exports.ExportWorkspace(ctx, ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var buf bytes.Buffer
	if _, err := stream.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var doc data.WorkspaceExport
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc, buf.String()
}

// suppressionList is ctx's workspace's suppression list, oldest first, by number.
func suppressionList(t *testing.T, env *testkit.Env, ctx context.Context) map[string]*data.Suppression {
	t.Helper()
	list, _, err := env.Svc.Suppressions.Suppressions(ctx, data.PageRequest{PerPage: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*data.Suppression{}
	for _, e := range list {
		out[e.PhoneNumber] = e
	}
	return out
}

// TestExportImportCarriesSuppressions: the export holds the suppression list, oldest
// first, each number with its reason and date and no id; an import adds it to the target's
// list, a number the target lists already (or the document repeats) kept once and counted
// a duplicate, the others keeping their dates; a bad entry refuses the import, naming
// suppressions.<i>, with nothing changed; a document without the member adds nothing.
func TestExportImportCarriesSuppressions(t *testing.T) {
	env := testkit.New(t, nil)
	u, other := env.User(t, "a@example.com"), env.User(t, "b@example.com")
	ctx, octx := testkit.As(u), testkit.As(other)
	optOut := "asked on a call"
	for _, in := range []data.SuppressionCreate{{PhoneNumber: "+14155550101", Reason: &optOut}, {PhoneNumber: "+14155550102"}, {PhoneNumber: "+442071838750"}} {
		if _, _, err := env.Svc.Suppressions.AddSuppression(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	source := suppressionList(t, env, ctx)
	doc, text := exportDoc(t, env, ctx, u.PersonalWorkspaceID, data.ExportOptions{})
	if len(doc.Suppressions) != 3 || strings.Contains(text, data.PrefixSuppression) {
		t.Fatalf("exported suppressions %+v (ids must not travel)", doc.Suppressions)
	}
	for i, want := range []string{"+14155550101", "+14155550102", "+442071838750"} {
		got, src := doc.Suppressions[i], source[want]
		if got.PhoneNumber != want || !reflect.DeepEqual(got.Reason, src.Reason) || !got.CreatedAt.Equal(src.CreatedAt.Time) {
			t.Errorf("suppressions.%d = %+v, want %+v", i, got, src)
		}
	}

	// The target lists one of the numbers already, with a reason of its own.
	mine := "the target's own"
	for _, in := range []data.SuppressionCreate{{PhoneNumber: "+14155550102", Reason: &mine}, {PhoneNumber: "+14155550199"}} {
		if _, _, err := env.Svc.Suppressions.AddSuppression(octx, in); err != nil {
			t.Fatal(err)
		}
	}
	before := suppressionList(t, env, octx)

	bad := *doc
	bad.Suppressions = append([]data.ExportSuppression(nil), doc.Suppressions...)
	bad.Suppressions[1].PhoneNumber = "415 555 0102" // national: a list's numbers carry their country code
	long := strings.Repeat("r", validate.MaxSuppressionReason+1)
	bad.Suppressions[2].Reason = &long
	_, err := env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, &bad, data.ImportOptions{})
	wantFields(t, err, "suppressions.1.phone_number", "suppressions.2.reason")
	if after := suppressionList(t, env, octx); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused import changed the list: %v, was %v", after, before)
	}

	old := *doc
	old.Suppressions = nil // a document written before the member
	res, err := env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, &old, data.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after := suppressionList(t, env, octx); !reflect.DeepEqual(after, before) || res.Suppressions != (data.SuppressionImport{}) {
		t.Errorf("a document without suppressions: list %v, counts %+v", after, res.Suppressions)
	}

	twice := *doc
	twice.Suppressions = append(append([]data.ExportSuppression(nil), doc.Suppressions...), doc.Suppressions[0])
	twice.Suppressions[0].PhoneNumber = "+1 (415) 555-0101" // normalized on import, as the list's import does
	res, err = env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, &twice, data.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (data.SuppressionImport{Rows: 4, Added: 2, Duplicates: 2}); res.Suppressions != want {
		t.Errorf("import counts %+v, want %+v", res.Suppressions, want)
	}
	after := suppressionList(t, env, octx)
	if len(after) != 4 || *after["+14155550102"].Reason != mine || after["+14155550199"] == nil {
		t.Errorf("the merged list %v", after)
	}
	for _, n := range []string{"+14155550101", "+442071838750"} {
		got, src := after[n], source[n]
		if got == nil || got.WorkspaceID != other.PersonalWorkspaceID || got.ID == src.ID ||
			!reflect.DeepEqual(got.Reason, src.Reason) || !got.CreatedAt.Equal(src.CreatedAt.Time) {
			t.Errorf("imported %s = %+v, want the date and reason of %+v under a new id", n, got, src)
		}
	}
}

// TestExportImportCarriesEmbeddings: the export holds the workspace's embedding provider,
// its key masked unless secrets are included; an import sets the target's, a masked key
// becoming null and named in missing_secrets, and embeds the target's own knowledge bases
// again through the update's path (the queued job runs them to ready with the new model),
// recording workspace.updated with the key masked; a document without the member leaves the target's provider; a bad provider is refused
// under workspace.embeddings with nothing changed.
func TestExportImportCarriesEmbeddings(t *testing.T) {
	e := newEmbedEnv(t)
	e.setProvider("model-a")
	doc, clear := exportEmbeddings(t, e)
	target := newEmbedTarget(t, e)
	target.checkRefusedImport(t, clear)
	target.checkMaskedImport(t, doc)
	target.checkImportWithSecrets(t, e, clear)
	target.checkImportWithoutEmbeddings(t, clear)
}

// exportEmbeddings exports e's workspace masked and with secrets, checks the embedding
// provider each holds, and returns both documents.
func exportEmbeddings(t *testing.T, e *embedEnv) (doc, clear *data.WorkspaceExport) {
	t.Helper()
	env := &testkit.Env{Store: e.store, Svc: e.svc}
	doc, text := exportDoc(t, env, e.ctx, e.ws, data.ExportOptions{})
	got := doc.Workspace.Embeddings
	if got == nil || *got.BaseURL != e.stand.BaseURL() || *got.Model != "model-a" || *got.APIKey != data.MaskSecret(e.stand.Key) ||
		strings.Contains(text, e.stand.Key) {
		t.Fatalf("exported embeddings %+v", got)
	}
	clear, _ = exportDoc(t, env, e.ctx, e.ws, data.ExportOptions{IncludeSecrets: true})
	if k := clear.Workspace.Embeddings.APIKey; k == nil || *k != e.stand.Key {
		t.Fatalf("exported with secrets: api_key %v", k)
	}
	return doc, clear
}

// embedTarget is the workspace the embeddings are imported into, with its own knowledge
// base.
type embedTarget struct {
	svc  *service.Services
	ctx  context.Context
	ws   string
	kbID string
}

// newEmbedTarget makes the target: a knowledge base and no provider, so embeddings are
// off there.
func newEmbedTarget(t *testing.T, e *embedEnv) *embedTarget {
	t.Helper()
	target := mustUser(t, e.svc, "target@example.com")
	tctx := ownerCtx(target.ID, target.PersonalWorkspaceID)
	kb, err := e.svc.KnowledgeBases.CreateKnowledgeBase(tctx, data.KnowledgeBaseCreate{Name: "Own", Texts: []data.TextInput{
		{Title: "Returns", Content: "Parcels can be sent back within thirty days for a refund."}}})
	if err != nil {
		t.Fatal(err)
	}
	tg := &embedTarget{svc: e.svc, ctx: tctx, ws: target.PersonalWorkspaceID, kbID: kb.ID}
	if s := tg.status(t); s.Status != data.EmbeddingsOff {
		t.Fatalf("the target's knowledge base before: %+v", s)
	}
	return tg
}

// status is the embeddings of the target's knowledge base.
func (tg *embedTarget) status(t *testing.T) *data.KnowledgeEmbeddings {
	t.Helper()
	got, err := tg.svc.KnowledgeBases.KnowledgeBase(tg.ctx, tg.kbID)
	if err != nil {
		t.Fatal(err)
	}
	return got.Embeddings
}

// provider is the target workspace's embedding provider.
func (tg *embedTarget) provider(t *testing.T) data.WorkspaceEmbeddings {
	t.Helper()
	w, err := tg.svc.Workspaces.Workspace(tg.ctx, tg.ws)
	if err != nil {
		t.Fatal(err)
	}
	return w.Embeddings
}

// checkRefusedImport checks a bad provider is refused under workspace.embeddings with
// nothing changed.
func (tg *embedTarget) checkRefusedImport(t *testing.T, clear *data.WorkspaceExport) {
	t.Helper()
	bad := *clear
	bad.Workspace.Embeddings = &data.WorkspaceEmbeddings{BaseURL: ptr("ftp://embeddings.example.com"), APIKey: ptr("sk-x")}
	_, err := tg.svc.Exports.ImportWorkspace(context.Background(), tg.ws, &bad, data.ImportOptions{})
	wantFields(t, err, "workspace.embeddings.base_url", "workspace.embeddings.model")
	if p := tg.provider(t); p.Configured() || p.APIKey != nil {
		t.Errorf("a refused import set the provider %+v", p)
	}
}

// checkMaskedImport imports the masked document: the key becomes null and is named in
// missing_secrets.
func (tg *embedTarget) checkMaskedImport(t *testing.T, doc *data.WorkspaceExport) {
	t.Helper()
	res, err := tg.svc.Exports.ImportWorkspace(context.Background(), tg.ws, doc, data.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := tg.provider(t); !p.Configured() || *p.Model != "model-a" || p.APIKey != nil || !slices.Contains(res.MissingSecrets, "workspace.embeddings.api_key") {
		t.Errorf("imported masked: provider %+v, missing_secrets %v", p, res.MissingSecrets)
	}
}

// checkImportWithSecrets imports with secrets and a new model: the key travels, the
// import records workspace.updated with it masked, and the target's knowledge base is
// embedded again by the queued job.
func (tg *embedTarget) checkImportWithSecrets(t *testing.T, e *embedEnv, clear *data.WorkspaceExport) {
	t.Helper()
	clear.Workspace.Embeddings.Model = ptr("model-b")
	if _, err := tg.svc.Exports.ImportWorkspace(context.Background(), tg.ws, clear, data.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := tg.provider(t); *p.Model != "model-b" || p.APIKey == nil || *p.APIKey != data.MaskSecret(e.stand.Key) {
		t.Errorf("imported with secrets: provider %+v", p)
	}
	events, _, err := tg.svc.Audit.ListAuditLog(tg.ctx, data.AuditFilter{Type: data.EventWorkspaceUpdated}, data.PageRequest{PerPage: 10})
	if err != nil || len(events) != 2 {
		t.Fatalf("workspace.updated: %d events (%v), want one for each import that set the provider", len(events), err)
	}
	if strings.Contains(string(events[0].Data), e.stand.Key) || !strings.Contains(string(events[0].Data), "model-b") {
		t.Errorf("workspace.updated of the import with secrets: %s, want model-b with the key masked", events[0].Data)
	}
	if s := tg.status(t); s.Status != data.EmbeddingsInProgress || s.Progress != (data.EmbeddingsProgress{Done: 0, Total: 1}) {
		t.Errorf("after the import: %+v, want embedding 0/1", s)
	}
	e.runJobs(0)
	if s := tg.status(t); s.Status != data.EmbeddingsReady || s.Progress.Done != 1 || *s.Model != "model-b" {
		t.Errorf("after the queued job ran: %+v, want ready with model-b", s)
	}
}

// checkImportWithoutEmbeddings checks a document without the member leaves the target's
// provider.
func (tg *embedTarget) checkImportWithoutEmbeddings(t *testing.T, clear *data.WorkspaceExport) {
	t.Helper()
	old := *clear
	old.Workspace.Embeddings = nil
	if _, err := tg.svc.Exports.ImportWorkspace(context.Background(), tg.ws, &old, data.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := tg.provider(t); !p.Configured() || *p.Model != "model-b" || p.APIKey == nil {
		t.Errorf("a document without embeddings changed the provider: %+v", p)
	}
}

// priceSet is a price table body from (provider, model, unit, price) rows.
func priceSet(t *testing.T, currency string, rows ...[4]string) data.PriceTableSet {
	t.Helper()
	in := data.PriceTableSet{Currency: currency, Prices: []data.PriceSet{}}
	for _, r := range rows {
		m, err := data.ParseMoney(r[3])
		if err != nil {
			t.Fatal(err)
		}
		in.Prices = append(in.Prices, data.PriceSet{Provider: r[0], Model: r[1], Unit: r[2], Price: &m})
	}
	return in
}

// TestExportImportCarriesPriceTable: the export holds the price table as its route takes
// it (none when never set); an import sets the target's through the route's rules and
// event, both recorded with the workspace.updated of the settings; a bad table is refused
// under workspace.price_table with nothing changed; a document without one leaves the
// target's.
func TestExportImportCarriesPriceTable(t *testing.T) {
	env := testkit.New(t, nil)
	u, other := env.User(t, "a@example.com"), env.User(t, "b@example.com")
	ctx, octx := testkit.As(u), testkit.As(other)
	if doc, _ := exportDoc(t, env, ctx, u.PersonalWorkspaceID, data.ExportOptions{}); doc.Workspace.PriceTable != nil {
		t.Fatalf("a workspace that never set prices exported %+v", doc.Workspace.PriceTable)
	}
	source := priceSet(t, "GBP", [4]string{"groq", "llama-3.3-70b-versatile", data.UnitLLMInput, "0.59"},
		[4]string{"groq", data.AnyModel, data.UnitLLMOutput, "0.000001"}, [4]string{"twilio", data.AnyModel, data.UnitPhoneMinute, "0.0085"})
	if _, err := env.Svc.Prices.SetPriceTable(ctx, source); err != nil {
		t.Fatal(err)
	}
	doc, _ := exportDoc(t, env, ctx, u.PersonalWorkspaceID, data.ExportOptions{})
	if !reflect.DeepEqual(doc.Workspace.PriceTable, &source) {
		t.Fatalf("exported price table %+v, want %+v", doc.Workspace.PriceTable, source)
	}

	own := priceSet(t, "EUR", [4]string{"deepgram", "nova-3", data.UnitSTTMinute, "0.0043"})
	before, err := env.Svc.Prices.SetPriceTable(octx, own)
	if err != nil {
		t.Fatal(err)
	}
	table := func() *data.PriceTable {
		t.Helper()
		got, err := env.Svc.Prices.PriceTable(octx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	bad := *doc
	broken := priceSet(t, "gbp", [4]string{"groq", "m", data.UnitLLMInput, "1"}, [4]string{"groq", "n", data.UnitLLMInput, "-0.01"},
		[4]string{"groq", "m", data.UnitLLMInput, "2"})
	bad.Workspace.PriceTable = &broken
	_, err = env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, &bad, data.ImportOptions{})
	wantFields(t, err, "workspace.price_table.currency", "workspace.price_table.prices.1.price", "workspace.price_table.prices.2")
	if got := table(); !reflect.DeepEqual(got, before) {
		t.Errorf("a refused import changed the table: %+v, was %+v", got, before)
	}

	old := *doc
	old.Workspace.PriceTable = nil
	if _, err := env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, &old, data.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := table(); !reflect.DeepEqual(got, before) {
		t.Errorf("a document without a price table changed it: %+v, was %+v", got, before)
	}

	if _, err := env.Svc.Exports.ImportWorkspace(context.Background(), other.PersonalWorkspaceID, doc, data.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	got := table()
	if got.Currency != "GBP" || len(got.Prices) != 3 || got.Prices[1].Price != 1 || got.Prices[2].Price.String() != "0.0085" {
		t.Errorf("imported price table %+v", got)
	}
	events, _, err := env.Svc.Audit.ListAuditLog(octx, data.AuditFilter{}, data.PageRequest{PerPage: 10})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range events {
		types = append(types, e.Type)
	}
	// Newest first: the import's event, the table's, the settings'.
	if len(types) < 3 || types[0] != data.EventWorkspaceImported || types[1] != data.EventPriceTableUpdated || types[2] != data.EventWorkspaceUpdated {
		t.Errorf("the target's audit log after the import: %v", types)
	}
	var recorded data.PriceTable
	if err := json.Unmarshal(events[1].Data, &recorded); err != nil || recorded.Currency != "GBP" || events[1].Actor.Type != "system" {
		t.Errorf("price_table.updated: %s by %+v (%v)", events[1].Data, events[1].Actor, err)
	}
}
