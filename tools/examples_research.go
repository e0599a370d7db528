package tools

import (
	"encoding/json"

	"github.com/specd/specd/research"
)

// Example source and query of the research examples: digest-validate and
// digest-put use the payload digest-create makes from them. "$source_id"
// names the digest the contract fixture (tests/contract_test.go) stores,
// with its source text archived under content_id = $source_id, for the
// query contractFixtureQuery. (The query hash is a literal, not a
// placeholder, because the contract test also sends the examples with
// placeholders unresolved, and a malformed hash would fail its pattern
// before the missing-parameter check it makes.)
const (
	exampleResearchText = "<h1>Embedded stores</h1><p>bbolt is an embedded key/value store with ACID transactions and a single writer. " +
		"Readers never block the writer, and every transaction sees a consistent snapshot.</p>" +
		"<p>A store file can be opened by one process at a time; other processes wait for its lock.</p>"
	exampleResearchQuery = "embedded store transactions"
	contractFixtureQuery = "archive locators"
)

// exampleResearchPayload is the digest of the example source, as a decoded
// JSON object (what a client sends).
var exampleResearchPayload = func() map[string]any {
	p, _, err := research.CreateDigest(research.CreateInput{Text: exampleResearchText, Query: exampleResearchQuery, MaxSnippets: 2})
	if err != nil {
		panic(err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic(err)
	}
	return m
}()

var researchExamples = map[string]map[string]any{
	"digest-validate": {"payload": exampleResearchPayload, "text": exampleResearchText, "query": exampleResearchQuery},
	"digest-create":   {"text": exampleResearchText, "query": exampleResearchQuery, "source_id": "example-source", "max_snippets": 2},
	"digest-put":      {"source_id": "example-source", "payload": exampleResearchPayload, "text": exampleResearchText},
	"digest-get":      {"source_id": "$source_id", "query_hash": research.QueryHash(contractFixtureQuery)},
	"digest-list":     {"limit": 10},
	"digest-delete":   {"source_id": "$source_id", "query_hash": research.QueryHash(contractFixtureQuery)},
	"archive-put":     {"content": "Decision: keep the archive content-addressed.", "content_id": "example-note", "item_type": "note"},
	"archive-get":     {"content_id": "$source_id"},
}
