package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
)

// OperationsService calls the health, metrics, OpenAPI and backup routes.
type OperationsService struct{ c *Client }

// Health returns the liveness status ("ok").
func (s *OperationsService) Health(ctx context.Context, opts ...RequestOption) (string, error) {
	return s.status(ctx, "healthz", opts)
}

// Ready returns the readiness status ("ready"); a server whose database does not answer
// is a 503 *Error.
func (s *OperationsService) Ready(ctx context.Context, opts ...RequestOption) (string, error) {
	return s.status(ctx, "readyz", opts)
}

func (s *OperationsService) status(ctx context.Context, op string, opts []RequestOption) (string, error) {
	res, err := s.c.do(ctx, request{op: op, opts: opts})
	if err != nil {
		return "", err
	}
	var b struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(res.body, &b); err != nil {
		return "", fmt.Errorf("client: decoding the response: %w", err)
	}
	return b.Status, nil
}

// Metrics returns the Prometheus text exposition (instance admins).
func (s *OperationsService) Metrics(ctx context.Context, opts ...RequestOption) (string, error) {
	res, err := s.c.do(ctx, request{op: "metrics", opts: opts})
	if err != nil {
		return "", err
	}
	return string(res.body), nil
}

// OpenAPI returns the server's OpenAPI document, raw.
func (s *OperationsService) OpenAPI(ctx context.Context, opts ...RequestOption) (json.RawMessage, error) {
	res, err := s.c.do(ctx, request{op: "openAPI", opts: opts})
	if err != nil {
		return nil, err
	}
	return json.RawMessage(res.body), nil
}

// Backup streams an online backup (a tar.gz) into w (instance admins); the secret key is
// left out when excludeSecretKey.
func (s *OperationsService) Backup(ctx context.Context, w io.Writer, excludeSecretKey bool, opts ...RequestOption) error {
	q := url.Values{}
	if excludeSecretKey {
		q.Set("exclude_secret_key", "true")
	}
	_, err := s.c.do(ctx, request{op: "backup", query: q, sink: w, opts: opts})
	return err
}
