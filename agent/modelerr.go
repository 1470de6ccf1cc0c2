package agent

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/wardenhq/warden/config"
)

// HTTPError is a model server's refusal: its status, its own message, and
// how long it asked to be left alone (Retry-After), if it did.
type HTTPError struct {
	Status     int
	Message    string
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

// maxErrorBody bounds what is read of an error response.
const maxErrorBody = 64 << 10

// httpError reads a non-2xx response: the message of an OpenAI-shaped
// error ({"error": {"message"}}, Ollama's {"error": "..."}, vLLM's
// {"object": "error", "message"}), else the body's text.
func httpError(resp *http.Response) *HTTPError {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &HTTPError{Status: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	e.Message = serverMessage(data)
	if e.Message == "" {
		e.Message = clip(string(data), 500)
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// parseRetryAfter reads Retry-After: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func retryAfter(err error) time.Duration {
	var h *HTTPError
	if errors.As(err, &h) {
		return h.RetryAfter
	}
	return 0
}

// refusesToolStream recognises older llama.cpp's refusal of tools with
// streaming (HTTP 500 "Cannot use tools with stream").
func refusesToolStream(err error) bool {
	var h *HTTPError
	return errors.As(err, &h) && strings.Contains(strings.ToLower(h.Message), "cannot use tools with stream")
}

func retryable(err error) bool {
	var streamErr *StreamError
	if errors.As(err, &streamErr) {
		return false // the server said what is wrong; asking again gets the same answer
	}
	if code := statusCode(err); code != 0 {
		return code == http.StatusTooManyRequests || code >= 500
	}
	// Nothing listening, or no route to the host: retrying for seconds
	// only delays the message that says which URL to fix.
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return false
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

func statusCode(err error) int {
	var h *HTTPError
	if errors.As(err, &h) {
		return h.Status
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// explain turns a transport or API failure into a message that says what to
// change, with the server's own words.
func (c *Client) explain(err error) error {
	detail := err.Error()
	var h *HTTPError
	var apiErr *openai.APIError
	switch {
	case errors.As(err, &h):
		detail = h.Message
	case errors.As(err, &apiErr) && apiErr.Message != "":
		detail = apiErr.Message
	}
	var streamErr *StreamError
	if errors.As(err, &streamErr) {
		return fmt.Errorf("the model server %s reported an error: %s", c.baseURL, streamErr.Message)
	}
	switch code := statusCode(err); {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("the model endpoint %s refused the API key (HTTP %d: %s); set %s", c.baseURL, code, detail,
			c.origins.Where("model.api_key", "OPENAI_API_KEY or [model] api_key in "+config.File()))
	case code == http.StatusNotFound:
		return fmt.Errorf("the model endpoint %s answered 404 for model %q (%s); check %s, and that %s ends where the API lives (usually /v1)", c.baseURL, c.model, detail,
			c.origins.Where("model.name", "WARDEN_MODEL or [model] name"), c.origins.Where("model.base_url", "OPENAI_BASE_URL"))
	case code == http.StatusTooManyRequests && retryAfter(err) > c.MaxRetryAfter:
		return fmt.Errorf("the model endpoint %s is rate limiting (HTTP 429) and asks to wait %s, longer than Warden waits (%s); try again later: %s",
			c.baseURL, seconds(retryAfter(err)), seconds(c.MaxRetryAfter), detail)
	case code == http.StatusTooManyRequests:
		return fmt.Errorf("the model endpoint %s is rate limiting (HTTP 429) and did not recover after %d retries: %s", c.baseURL, c.Retries, detail)
	case code >= 500:
		return fmt.Errorf("the model endpoint %s failed (HTTP %d) after %d retries: %s", c.baseURL, code, c.Retries, detail)
	case code != 0:
		return fmt.Errorf("the model endpoint %s rejected the request (HTTP %d): %s", c.baseURL, code, detail)
	}
	var netErr net.Error
	var opErr *net.OpError
	if errors.As(err, &opErr) || errors.As(err, &netErr) {
		return fmt.Errorf("cannot reach the model endpoint %s (%v); is the server running? Set %s", c.baseURL, err,
			c.origins.Where("model.base_url", "OPENAI_BASE_URL or [model] base_url in "+config.File()))
	}
	return fmt.Errorf("model stream from %s: %w", c.baseURL, err)
}
