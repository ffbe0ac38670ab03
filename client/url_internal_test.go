package client

import (
	"net/url"
	"testing"
)

func TestURLEscapesEachArgumentAsOneSegment(t *testing.T) {
	c, err := New("https://api.example.com/base/")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		template string
		args     []string
		query    url.Values
		want     string
		wantErr  bool
	}{
		{"/api/v1/agents/{id}", []string{"agt_1"}, nil, "https://api.example.com/base/api/v1/agents/agt_1", false},
		{"/api/v1/agents/{id}", []string{"a/b?c"}, nil, "https://api.example.com/base/api/v1/agents/a%2Fb%3Fc", false},
		{"/api/v1/agents/{agent_id}/versions/{version_number}", []string{"x", "2"}, url.Values{"per_page": {"5"}}, "https://api.example.com/base/api/v1/agents/x/versions/2?per_page=5", false},
		{"/api/v1/agents/{id}", nil, nil, "", true},
		{"/api/v1/agents/{id}", []string{""}, nil, "", true},
		{"/api/v1/agents", []string{"extra"}, nil, "", true},
	}
	for _, tc := range cases {
		got, err := c.url(tc.template, tc.args, tc.query)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("url(%s, %q) = %q, %v; want %q", tc.template, tc.args, got, err, tc.want)
		}
	}
}
