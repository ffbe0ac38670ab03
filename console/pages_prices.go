package console

import (
	"net/http"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The workspace's price table (docs/analysis.md, "Cost"): what each provider's usage
// costs, from which calls' cost figures are priced. The page reads and saves it through
// GET and PUT /api/v1/price-table, so who may open or change it is the API's rule (owners
// and admins); what the API refuses, the page shows in words.

func (h *Handler) priceRoutes() {
	h.mux.HandleFunc("GET /workspace/prices", h.page(h.pricesPage))
	h.mux.HandleFunc("POST /workspace/prices", h.action(h.pricesSave))
}

// priceLabels are the form's labels, for the API's messages.
var priceLabels = fieldLabels{
	"currency":          "Currency",
	"prices":            "Prices",
	"prices.#":          "Row #",
	"prices.#.provider": "Row # provider",
	"prices.#.model":    "Row # model",
	"prices.#.unit":     "Row # unit",
	"prices.#.price":    "Row # price",
}

// blankPriceRows is how many empty rows the form offers for new prices.
const blankPriceRows = 3

func (h *Handler) pricesPage(w http.ResponseWriter, r *http.Request) {
	h.renderPrices(w, r, http.StatusOK, nil, nil)
}

// renderPrices shows the table and its form; after a refusal, what was sent (typed)
// instead of what is stored, row for row, so a fault named prices.N sits beside row N.
func (h *Handler) renderPrices(w http.ResponseWriter, r *http.Request, status int, fail *apiError, typed map[string]any) {
	res, err := h.call(r, "GET", "/api/v1/price-table", nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	stored := res.Data()
	shown := stored
	if typed != nil {
		shown = typed
	}
	rows := asList(shown["prices"])
	for range blankPriceRows {
		rows = append(rows, map[string]any{})
	}
	h.render(w, r, status, "prices", &view{Title: "Prices", Active: "workspace", Err: relabel(fail, priceLabels), D: map[string]any{
		"Stored": stored, "Prices": asList(stored["prices"]), "ETag": res.ETag, "Currency": shown["currency"],
		"Rows": rows, "Units": data.PriceUnits, "Conflict": fail != nil && fail.Status == http.StatusPreconditionFailed,
	}})
}

// pricesSave replaces the table with the form's rows (empty rows left out) under the
// If-Match of the table the page showed.
func (h *Handler) pricesSave(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	f := r.PostForm
	providers, models, units, prices := f["provider"], f["model"], f["unit"], f["price"]
	rows := []any{}
	for i := range providers {
		row := map[string]any{"provider": strings.TrimSpace(providers[i]), "model": strings.TrimSpace(at(models, i)),
			"unit": at(units, i), "price": strings.TrimSpace(at(prices, i))}
		if row["provider"] == "" && row["model"] == "" && row["price"] == "" {
			continue
		}
		rows = append(rows, row)
	}
	body := map[string]any{"currency": strings.TrimSpace(f.Get("currency")), "prices": rows}
	if _, err := h.callIfMatch(r, "PUT", "/api/v1/price-table", f.Get("etag"), body); err != nil {
		h.renderPrices(w, r, err.(*apiError).Status, err.(*apiError), body)
		return
	}
	h.done(w, r, "/workspace/prices", flash{Notice: "Prices saved. Calls priced from now on use them; calls already priced keep their cost."})
}

// at is list[i], or "" past its end (a form posted without some of its fields).
func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return ""
}
