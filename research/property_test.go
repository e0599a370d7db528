package research

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// docPieces are the building blocks of generated documents: words, marks,
// astral and CJK characters, HTML tags and entities (also nested and
// entity-encoded), white space, punctuation and invalid bytes.
var docPieces = [][]string{
	{"alpha", "beta", "gamma", "delta", "fox", "quick", "data", "research", "model", "the", "and", "of", "Fox", "QUICK"},
	{"e\u0301", "a\u0308\u0323", "\u0301", "n\u0303o", "\u0915\u093c", "\u0958", "\ufb2c", "Å", "\u212b"},
	{"𝔘", "😀", "👍🏽", "🏳️\u200d🌈", "𠜎", "\U0001d160"},
	{"中文字", "日本語。", "한국어", "العربية؟", "हिन्दी।"},
	{"<p>", "</p>", "<br/>", `<a href="x&amp;y">`, "<!-- c -->", "<div\nclass='y'>", "<b>", "</b>", "<", ">"},
	{"&amp;", "&lt;b&gt;", "&#x1F600;", "&nbsp;", "&amp;lt;", "&#233;", "&eacute;", "&#x301;", "&Kappa;", "&\u212aappa;", "&", "&#", "&lt", "&amp;amp;gt;"},
	{" ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u3000", "\u2028"},
	{".", ",", ";", "!", "?", "…", ":", "—", "\"", ")", ". "},
	{"\xff", "\u212a", "\u037e", "\x00", "\ufffd", "\xe2\x82"},
}

// pieceWeights biases generation towards words and spaces.
var pieceWeights = []int{40, 6, 5, 5, 6, 6, 25, 10, 1}

func genDoc(rng *rand.Rand, size int) string {
	total := 0
	for _, w := range pieceWeights {
		total += w
	}
	var b strings.Builder
	for b.Len() < size {
		if rng.IntN(200) == 0 { // a long run without spaces forces hard cuts
			b.WriteString(strings.Repeat(string(rune('a'+rng.IntN(26))), 50+rng.IntN(1200)))
			continue
		}
		k := rng.IntN(total)
		g := 0
		for k >= pieceWeights[g] {
			k -= pieceWeights[g]
			g++
		}
		b.WriteString(docPieces[g][rng.IntN(len(docPieces[g]))])
		if g == 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func genQuery(rng *rand.Rand) string {
	var words []string
	for i := rng.IntN(6); i > 0; i-- {
		g := []int{0, 0, 0, 1, 2, 3}[rng.IntN(6)]
		words = append(words, docPieces[g][rng.IntN(len(docPieces[g]))])
	}
	return strings.Join(words, " ")
}

// TestCreateDigestProperty: for generated documents of 0–200 KB (single or
// paged), CreateDigest's output validates against its canonical text and
// query with zero violations and every locator verified, and each page's
// canonical form is idempotent.
func TestCreateDigestProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 60
	if testing.Short() {
		n = 15
	}
	sizes := []int{0, 1, 10, 100, 1000, 200 << 10}
	for len(sizes) < n {
		// log-uniform between 1 byte and 200 KB
		sizes = append(sizes, int(float64(200<<10)*pow2(-17*rng.Float64())))
	}
	for i, size := range sizes {
		doc := genDoc(rng, size)
		query := genQuery(rng)
		in := CreateInput{Query: query, MaxSnippets: rng.IntN(MaxEvidenceSnippets + 1)}
		if rng.IntN(5) < 2 {
			for k := rng.IntN(6); k >= 0; k-- {
				cut := 0
				if len(doc) > 0 {
					cut = rng.IntN(len(doc) + 1)
				}
				in.Pages = append(in.Pages, doc[:cut])
				doc = doc[cut:]
			}
			in.Pages = append(in.Pages, doc)
		} else {
			in.Text = doc
		}
		p, info, err := CreateDigest(in)
		if err != nil {
			t.Fatalf("doc %d: %v", i, err)
		}
		checkDigest(t, p, info, query)
		want := in.MaxSnippets
		if want == 0 {
			want = DefaultMaxSnippets
		}
		if len(p.EvidenceSnippets) > want {
			t.Fatalf("doc %d: %d snippets, max %d", i, len(p.EvidenceSnippets), want)
		}
		pages := in.Pages
		if pages == nil {
			pages = []string{in.Text}
		}
		for _, pg := range pages {
			checkCanonical(t, pg, Canonicalize(pg))
		}
	}
}

func pow2(x float64) float64 {
	r := 1.0
	for x <= -1 {
		r /= 2
		x++
	}
	// 2^x for x in (-1, 0]: good enough by linear interpolation
	return r * (1 + x/2)
}
