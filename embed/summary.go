package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Summarizer writes short summaries with the chat completions endpoint of
// an OpenAI-compatible server (POST {BaseURL}/chat/completions), through
// the embedder's HTTP client: the same retries and backoff. The cortex's
// optional LLM summaries of episodes are its only use.
type Summarizer struct {
	OpenAI // BaseURL, Model (a chat model), APIKey, retries, client
}

// DefaultSummaryModel is the chat model summaries are asked of by default.
const DefaultSummaryModel = "gpt-4o-mini"

// summaryPrompt is the instruction a summary is asked with.
const summaryPrompt = "You summarize one segment of an AI agent's work from its extractive summary " +
	"(the ask, the outcome, the files, commands, URLs and errors). Answer with one or two plain sentences: " +
	"what was asked, what was done, how it ended. No preamble."

// maxSummaryChars bounds a summary as stored.
const maxSummaryChars = 1000

// SummarizerFromEnv configures the summarizer from the environment:
// CLAWLEDGER_LLM_BASE_URL (default OpenAI's API), CLAWLEDGER_LLM_MODEL
// (default DefaultSummaryModel), the key in CLAWLEDGER_LLM_API_KEY, else
// OPENAI_API_KEY when the endpoint is OpenAI's own (never sent anywhere
// else).
func SummarizerFromEnv(getenv func(string) string) (*Summarizer, error) {
	s := &Summarizer{OpenAI{BaseURL: getenv("CLAWLEDGER_LLM_BASE_URL"), Model: getenv("CLAWLEDGER_LLM_MODEL"),
		APIKey: getenv("CLAWLEDGER_LLM_API_KEY")}}
	if s.BaseURL == "" {
		s.BaseURL = DefaultBaseURL
	}
	if s.Model == "" {
		s.Model = DefaultSummaryModel
	}
	u, err := url.Parse(s.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("CLAWLEDGER_LLM_BASE_URL %q is not an http(s) URL", s.BaseURL)
	}
	if s.APIKey == "" && u.Host == "api.openai.com" {
		if s.APIKey = getenv("OPENAI_API_KEY"); s.APIKey == "" {
			return nil, fmt.Errorf("no API key for %s: set CLAWLEDGER_LLM_API_KEY (or OPENAI_API_KEY), or CLAWLEDGER_LLM_BASE_URL to an endpoint that needs none", s.BaseURL)
		}
	}
	return s, nil
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
}

type chatResponse struct {
	Choices []struct {
		Message chatMessage `json:"message"`
	} `json:"choices"`
}

// Summarize returns the summary of a text, on one line.
func (s *Summarizer) Summarize(ctx context.Context, text string) (string, error) {
	if r := []rune(text); len(r) > maxInputChars {
		text = string(r[:maxInputChars])
	}
	body, err := json.Marshal(chatRequest{Model: s.Model, Temperature: 0,
		Messages: []chatMessage{{Role: "system", Content: summaryPrompt}, {Role: "user", Content: text}}})
	if err != nil {
		return "", err
	}
	u := strings.TrimRight(s.BaseURL, "/") + "/chat/completions"
	data, err := s.request(ctx, "summary", u, body)
	if err != nil {
		return "", err
	}
	var r chatResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return "", fmt.Errorf("summary response from %s: %v", u, err)
	}
	if len(r.Choices) == 0 || strings.TrimSpace(r.Choices[0].Message.Content) == "" {
		return "", fmt.Errorf("summary response from %s: no summary", u)
	}
	out := strings.Join(strings.Fields(r.Choices[0].Message.Content), " ")
	if r := []rune(out); len(r) > maxSummaryChars {
		out = string(r[:maxSummaryChars-1]) + "…"
	}
	return out, nil
}
