package server

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
)

func (s *Server) priceRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/price-table", Need: workspaceAdmin, handle: s.handlePriceTableShow},
		{Method: "PUT", Path: "/api/v1/price-table", Need: workspaceAdmin, handle: s.handlePriceTableSet},
	}
}

// handlePriceTableShow: GET /api/v1/price-table — the workspace's prices.
func (s *Server) handlePriceTableShow(w http.ResponseWriter, r *http.Request) error {
	t, err := s.svc.Prices.PriceTable(r.Context())
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, t, nil)
}

// handlePriceTableSet: PUT /api/v1/price-table — replaces the whole table.
func (s *Server) handlePriceTableSet(w http.ResponseWriter, r *http.Request) error {
	var in data.PriceTableSet
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	t, err := s.svc.Prices.SetPriceTable(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, t, nil)
}
