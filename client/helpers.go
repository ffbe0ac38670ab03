package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/voiceapi/voiceapi/data"
)

// getRecord sends a request without a body and decodes {"data": T} with its ETag.
func getRecord[T any](ctx context.Context, c *Client, op string, args []string, opts []RequestOption) (*T, string, error) {
	res, err := c.do(ctx, request{op: op, pathArgs: args, opts: opts})
	if err != nil {
		return nil, "", err
	}
	return record[T](res)
}

// sendRecord sends body (nil for none) as JSON and decodes {"data": T} with its ETag.
func sendRecord[T any](ctx context.Context, c *Client, op string, args []string, body any, opts []RequestOption) (*T, string, error) {
	req := request{op: op, pathArgs: args, opts: opts}
	if body != nil {
		b, err := jsonBody(body)
		if err != nil {
			return nil, "", err
		}
		req.body, req.contentType = b, "application/json"
	}
	res, err := c.do(ctx, req)
	if err != nil {
		return nil, "", err
	}
	return record[T](res)
}

// noContent sends body (nil for none) and expects no content back.
func (c *Client) noContent(ctx context.Context, op string, args []string, body any, opts []RequestOption) error {
	req := request{op: op, pathArgs: args, opts: opts}
	if body != nil {
		b, err := jsonBody(body)
		if err != nil {
			return err
		}
		req.body, req.contentType = b, "application/json"
	}
	_, err := c.do(ctx, req)
	return err
}

// dataOf sends r and decodes the "data" member of the response into out.
func (c *Client) dataOf(ctx context.Context, r request, out any) error {
	res, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	env := struct {
		Data any `json:"data"`
	}{Data: out}
	if err := data.DecodeJSON(res.body, &env); err != nil {
		return fmt.Errorf("client: decoding the response: %w", err)
	}
	return nil
}

// recordWith decodes {"data": T, name: extra} with the ETag: the records that come with
// a one-time secret or token beside them.
func recordWith[T any, X any](res *response, name string, extra *X) (*T, string, error) {
	var env map[string]json.RawMessage
	if err := data.DecodeJSON(res.body, &env); err != nil {
		return nil, "", fmt.Errorf("client: decoding the response: %w", err)
	}
	if raw, ok := env[name]; ok {
		if err := data.DecodeJSON(raw, extra); err != nil {
			return nil, "", fmt.Errorf("client: decoding %s: %w", name, err)
		}
	}
	return record[T](res)
}
