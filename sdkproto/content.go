package sdkproto

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// BlockKind names the variant of a ContentBlock, with the upstream
// TypeScript type names.
type BlockKind string

// The variants of ContentBlock.
const (
	// KindText is a {"type":"text","text":…} block: visible text.
	KindText BlockKind = "TextBlock"
	// KindReasoning is a {"type":"reasoning","text":…} block: model thinking.
	KindReasoning BlockKind = "ReasoningBlock"
	// KindImage is a durable image reference {"type":"image","attachment":…}.
	KindImage BlockKind = "ImageBlock"
	// KindToolCall is a {"type":"tool-call","id","name","arguments"} block.
	KindToolCall BlockKind = "ToolCallBlock"
	// KindToolResult is a {"type":"tool-result","toolCallId","content","isError"?} block.
	KindToolResult BlockKind = "ToolResultBlock"
	// KindImageUpload is the prompt-side encoded image
	// {"type":"image","data":…,"mimeType":…} (SdkEncodedImageBlock, newer
	// revisions): an image block with a data member, whatever its value.
	KindImageUpload BlockKind = "SdkEncodedImageBlock"
	// KindUnknown is any other value: an unknown type, a block without a
	// string type, or a value that is not an object. It is kept verbatim.
	KindUnknown BlockKind = "Unknown"
)

// The type tags of the known content blocks.
const (
	BlockTypeText       = "text"
	BlockTypeReasoning  = "reasoning"
	BlockTypeImage      = "image"
	BlockTypeToolCall   = "tool-call"
	BlockTypeToolResult = "tool-result"
)

// ContentBlock is one element of message content (ContentBlock upstream)
// or of prompt content (SdkPromptContentBlock, which adds the encoded image
// upload). It is a single union type: Type selects which of the typed
// fields are meaningful (see Kind).
//
// Nothing is lost: a block decoded from JSON keeps its bytes, and encoding
// a block that was not modified returns them unchanged; after a
// modification only the modified members are rewritten, and unknown
// members keep their spelling and position. Any JSON value decodes (a
// string, null or an object without type becomes KindUnknown), because
// upstream queues such blocks verbatim. A member of the wrong JSON type
// leaves its field at the zero value and stays in the kept bytes. A block
// built in Go encodes compactly, members in the order upstream's
// JSON.stringify writes them.
type ContentBlock struct {
	// Type is the type tag; "" when missing or not a string.
	Type string
	// Text is the text of text and reasoning blocks.
	Text string
	// Attachment is the durable reference of an image block.
	Attachment *ImageAttachmentRef
	// ID, Name and Arguments belong to tool-call blocks. Arguments is the
	// raw JSON text the model produced (possibly invalid JSON), never an object.
	ID, Name, Arguments string
	// ToolCallID, Content and IsError belong to tool-result blocks; a nil
	// IsError (member absent) means false.
	ToolCallID string
	Content    []ContentBlock
	IsError    *bool
	// Data (canonical standard base64) and MimeType belong to the encoded
	// image upload.
	Data, MimeType string

	isObject bool // decoded from a JSON object (or built in Go)
	hasData  bool // the decoded object had a data member
	k        keep
}

// ImageAttachmentRef is the durable reference to a stored image
// (packages/attachment/attachment/src/types.ts).
type ImageAttachmentRef struct {
	AttachmentID       string      // opaque; the local store uses sha256:<64 hex>
	MediaType          string      // image/png, image/jpeg, image/webp or image/gif
	Bytes              int64       // stored size
	Width, Height      int64       // stored dimensions
	Name               string      // optional; omitted when empty
	OriginalDimensions *Dimensions // present only when the image was downscaled
	k                  keep
}

// Dimensions is a {width, height} pair.
type Dimensions struct {
	Width, Height int64
	k             keep
}

// TextBlock returns a text block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: BlockTypeText, Text: text} }

// ReasoningBlock returns a reasoning block.
func ReasoningBlock(text string) ContentBlock {
	return ContentBlock{Type: BlockTypeReasoning, Text: text}
}

// ImageBlock returns a durable image reference block.
func ImageBlock(ref ImageAttachmentRef) ContentBlock {
	return ContentBlock{Type: BlockTypeImage, Attachment: &ref}
}

// ImageUpload returns an encoded image block carrying data as canonical
// standard base64 and the given mime type (e.g. "image/png").
func ImageUpload(mimeType string, data []byte) ContentBlock {
	return ContentBlock{Type: BlockTypeImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// ToolCallBlock returns a tool-call block; arguments is raw JSON text.
func ToolCallBlock(id, name, arguments string) ContentBlock {
	return ContentBlock{Type: BlockTypeToolCall, ID: id, Name: name, Arguments: arguments}
}

// ToolResultBlock returns a tool-result block; isError is written only when true.
func ToolResultBlock(toolCallID string, content []ContentBlock, isError bool) ContentBlock {
	b := ContentBlock{Type: BlockTypeToolResult, ToolCallID: toolCallID, Content: content}
	if b.Content == nil {
		b.Content = []ContentBlock{}
	}
	if isError {
		b.IsError = &isError
	}
	return b
}

// Kind returns the block's variant, decided by Type alone (and, for
// images, by the presence of a data member, as the runtime decides).
func (b ContentBlock) Kind() BlockKind {
	if b.k.raw != nil && !b.isObject {
		return KindUnknown
	}
	switch b.Type {
	case BlockTypeText:
		return KindText
	case BlockTypeReasoning:
		return KindReasoning
	case BlockTypeImage:
		if b.IsUpload() {
			return KindImageUpload
		}
		return KindImage
	case BlockTypeToolCall:
		return KindToolCall
	case BlockTypeToolResult:
		return KindToolResult
	}
	return KindUnknown
}

// IsUpload reports whether b is an encoded image upload: an image block
// with a data member (decoded) or non-empty Data (built in Go).
func (b ContentBlock) IsUpload() bool {
	return b.Type == BlockTypeImage && (b.hasData || b.Data != "")
}

// IsObject reports whether b is a JSON object. Only decoding can produce a
// block that is not one (e.g. from "hello" or null).
func (b ContentBlock) IsObject() bool { return b.k.raw == nil || b.isObject }

// Raw returns the JSON b was decoded from, or nil for a block built in Go.
// The bytes are shared: do not modify them.
func (b ContentBlock) Raw() json.RawMessage { return b.k.raw }

// Member returns the raw JSON of the member key as decoded, or nil when
// the member was absent or b was built in Go.
func (b ContentBlock) Member(key string) json.RawMessage { return memberOf(b.k, key) }

// Failed reports the tool-result flag: IsError when set, else false.
func (b ContentBlock) Failed() bool { return b.IsError != nil && *b.IsError }

// blockIs reports whether b's type is one of types.
func blockIs(b *ContentBlock, types ...string) bool {
	for _, t := range types {
		if b.Type == t {
			return true
		}
	}
	return false
}

// blockFields are the fields of ContentBlock. The depth a block is decoded
// at (see maxContentDepth) matters only to the content it holds. They are
// set by init: the content they hold decodes with them.
var blockFields []field[ContentBlock]

func init() { blockFields = newBlockFields() }

func newBlockFields() []field[ContentBlock] {
	return []field[ContentBlock]{
		reqString("type", func(b *ContentBlock) *string { return &b.Type }),
		strWhen("text", func(b *ContentBlock) *string { return &b.Text },
			func(b *ContentBlock) bool { return blockIs(b, BlockTypeText, BlockTypeReasoning) }),
		optValue("attachment", func(b *ContentBlock) **ImageAttachmentRef { return &b.Attachment }),
		strWhen("id", func(b *ContentBlock) *string { return &b.ID }, func(b *ContentBlock) bool { return blockIs(b, BlockTypeToolCall) }),
		strWhen("name", func(b *ContentBlock) *string { return &b.Name }, func(b *ContentBlock) bool { return blockIs(b, BlockTypeToolCall) }),
		strWhen("arguments", func(b *ContentBlock) *string { return &b.Arguments }, func(b *ContentBlock) bool { return blockIs(b, BlockTypeToolCall) }),
		strWhen("toolCallId", func(b *ContentBlock) *string { return &b.ToolCallID }, func(b *ContentBlock) bool { return blockIs(b, BlockTypeToolResult) }),
		blocksField("content", func(b *ContentBlock) *[]ContentBlock { return &b.Content }, true,
			func(b *ContentBlock) bool { return b.Content != nil || blockIs(b, BlockTypeToolResult) }),
		optBoolPtr("isError", func(b *ContentBlock) **bool { return &b.IsError }),
		{key: "data", dec: func(b *ContentBlock, r json.RawMessage, _ int) held {
			b.hasData = true
			b.Data, _ = memberString(r)
			return heldOther
		}, enc: func(b *ContentBlock) (json.RawMessage, bool) {
			return present(b.IsUpload(), func() json.RawMessage { return marshal(b.Data) })
		}},
		strWhen("mimeType", func(b *ContentBlock) *string { return &b.MimeType },
			func(b *ContentBlock) bool { return b.IsUpload() && (b.MimeType != "" || b.k.raw == nil) }),
	}
}

// UnmarshalJSON decodes any JSON value into b, keeping its bytes.
func (b *ContentBlock) UnmarshalJSON(data []byte) error { return b.decode(data, 0, false) }

// decodeValid is UnmarshalJSON for a member's value (see validDecoder).
func (b *ContentBlock) decodeValid(r json.RawMessage) error { return b.decode(r, 0, true) }

// maxContentDepth bounds the nesting of content blocks that is decoded
// (tool results holding tool results...; upstream's tool results hold
// text and image blocks only, one level). Each level of decoding re-reads
// the levels below it, and encoding a changed block re-encodes them, so
// the cost grows with the square of the depth times the size, and faster
// for deep narrow input: 500 levels (17 KB) took 22 s without the bound.
// A block deeper than the bound fails to decode, so the content array
// holding it stays undecoded (Content nil) but is kept verbatim in the
// enclosing block's bytes.
const maxContentDepth = 4

var errContentTooDeep = errors.New("sdkproto: content blocks nested too deeply")

// decode decodes a block nested depth levels deep in content; valid says
// data is a value taken from a validated object (see decodeValidFields).
func (b *ContentBlock) decode(data []byte, depth int, valid bool) error {
	*b = ContentBlock{}
	if depth > maxContentDepth {
		return errContentTooDeep
	}
	if valid {
		b.isObject = decodeValidFields(&b.k, data, blockFields, b, depth)
		return nil
	}
	obj, err := decodeFields(&b.k, data, blockFields, b, depth)
	b.isObject = obj
	return err
}

func (b *ContentBlock) kept() *keep { return &b.k }

// MarshalJSON encodes b; see ContentBlock for what is preserved.
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	if b.k.raw != nil && !b.isObject {
		return b.k.raw, nil
	}
	return encodeFields(blockFields, &b)
}

var attachmentFields = []field[ImageAttachmentRef]{
	reqString("attachmentId", func(r *ImageAttachmentRef) *string { return &r.AttachmentID }),
	reqString("mediaType", func(r *ImageAttachmentRef) *string { return &r.MediaType }),
	reqInt("bytes", func(r *ImageAttachmentRef) *int64 { return &r.Bytes }),
	reqInt("width", func(r *ImageAttachmentRef) *int64 { return &r.Width }),
	reqInt("height", func(r *ImageAttachmentRef) *int64 { return &r.Height }),
	optString("name", func(r *ImageAttachmentRef) *string { return &r.Name }),
	optValue("originalDimensions", func(r *ImageAttachmentRef) **Dimensions { return &r.OriginalDimensions }),
}

// UnmarshalJSON decodes an attachment reference, keeping its bytes.
func (r *ImageAttachmentRef) UnmarshalJSON(data []byte) error {
	*r = ImageAttachmentRef{}
	return objectOnly(decodeFields(&r.k, data, attachmentFields, r, 0))
}

func (r *ImageAttachmentRef) kept() *keep { return &r.k }

// MarshalJSON encodes r, preserving decoded bytes as ContentBlock does.
func (r ImageAttachmentRef) MarshalJSON() ([]byte, error) {
	return encodeFields(attachmentFields, &r)
}

var dimensionsFields = []field[Dimensions]{
	reqInt("width", func(d *Dimensions) *int64 { return &d.Width }),
	reqInt("height", func(d *Dimensions) *int64 { return &d.Height }),
}

// UnmarshalJSON decodes a {width, height} object, keeping its bytes.
func (d *Dimensions) UnmarshalJSON(data []byte) error {
	*d = Dimensions{}
	return objectOnly(decodeFields(&d.k, data, dimensionsFields, d, 0))
}

func (d *Dimensions) kept() *keep { return &d.k }

// MarshalJSON encodes d, preserving decoded bytes.
func (d Dimensions) MarshalJSON() ([]byte, error) { return encodeFields(dimensionsFields, &d) }

// objectOnly turns a decoded non-object into an error.
func objectOnly(isObject bool, err error) error {
	if err == nil && !isObject {
		return errNotObject
	}
	return err
}

// decodeBlocks decodes a JSON array of blocks, a value taken from a
// validated object; ok is false (and blocks nil) when r is not an array.
// An empty array gives a non-nil empty slice.
func decodeBlocks(r json.RawMessage) (blocks []ContentBlock, ok bool) { return decodeBlocksAt(r, 0) }

// decodeBlocksAt decodes the content of a block depth-1 levels deep.
func decodeBlocksAt(r json.RawMessage, depth int) (blocks []ContentBlock, ok bool) {
	elems := elements(r)
	if elems == nil {
		return nil, false
	}
	blocks = make([]ContentBlock, len(elems))
	for i, e := range elems {
		if blocks[i].decode(e, depth, true) != nil {
			return nil, false
		}
	}
	return blocks, true
}

// blocksField is a member holding content blocks, written when present
// reports so: the content of a block, a level below it, when nested; else
// content at the top (a message's). Content that does not decode leaves
// the field nil.
func blocksField[T any](key string, p func(*T) *[]ContentBlock, nested bool, present func(*T) bool) field[T] {
	return field[T]{key: key, dec: func(v *T, r json.RawMessage, depth int) held {
		if !nested {
			depth = -1
		}
		var ok bool
		if *p(v), ok = decodeBlocksAt(r, depth+1); ok {
			return heldAsIs // blocks keep their bytes: they encode as r does
		}
		return heldOther
	}, enc: func(v *T) (json.RawMessage, bool) {
		if !present(v) {
			return nil, false
		}
		return encodeBlocks(*p(v)), true
	}}
}

func encodeBlocks(blocks []ContentBlock) json.RawMessage {
	if blocks == nil {
		blocks = []ContentBlock{}
	}
	return marshal(blocks)
}

// FinalText concatenates the text of the text blocks, without separators,
// as run() computes finalResponse. A text member that is not a string is
// rendered as JavaScript's Array.prototype.join would (5 gives "5", a
// missing or null text gives "").
func FinalText(blocks []ContentBlock) string {
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type != BlockTypeText || !b.IsObject() {
			continue
		}
		if raw := b.Member("text"); raw != nil && kindOf(raw) != kindString {
			if k := kindOf(raw); k != kindNull {
				sb.WriteString(Interpolate(raw))
			}
			continue
		}
		sb.WriteString(b.Text)
	}
	return sb.String()
}
