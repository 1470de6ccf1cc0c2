package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Check is the answer of one real request to the model endpoint.
type Check struct {
	// Status is ok, unauthorized (401/403: the key), not_found (404: the
	// base URL), unreachable (nothing answers at that address) or error.
	Status     string `json:"status"`
	HTTPStatus int    `json:"http_status,omitempty"`
	// Detail says what to change; empty when ok.
	Detail string `json:"detail,omitempty"`
	// Listed says whether the endpoint's model list names the configured
	// model; some servers list nothing, so only a warning when false.
	Listed bool `json:"listed"`
	Models int  `json:"models"`
}

// CheckTimeout bounds Check: dialing gives up after DialTimeout, and a
// server that accepts but never answers is no better.
const CheckTimeout = 5 * time.Second

// Check asks the endpoint for its model list (GET /models): it spends no
// tokens and loads no model, yet goes through the same address and the
// same API key as the agent's requests, so a wrong URL, a refused key and
// a server that is not running each show before the first task does.
func (c *Client) Check(ctx context.Context) Check {
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	list, err := c.api.ListModels(ctx)
	if err != nil {
		res := Check{Status: "error", HTTPStatus: statusCode(err), Detail: c.explain(err).Error()}
		var opErr *net.OpError
		switch code := res.HTTPStatus; {
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			res.Status = "unauthorized"
		case code == http.StatusNotFound:
			res.Status = "not_found"
		case code == 0 && errors.As(err, &opErr):
			res.Status = "unreachable"
		case code == 0 && errors.Is(err, context.DeadlineExceeded):
			res.Status = "unreachable"
			res.Detail = fmt.Sprintf("the model endpoint %s did not answer within %v; is the server running? Set %s", c.baseURL, CheckTimeout,
				c.origins.Where("model.base_url", "OPENAI_BASE_URL or [model] base_url"))
		}
		return res
	}
	res := Check{Status: "ok", Models: len(list.Models)}
	for _, m := range list.Models {
		if m.ID == c.model {
			res.Listed = true
		}
	}
	return res
}
