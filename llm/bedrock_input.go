package llm

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// input builds the Converse request of req. Converse wants strictly alternating user and
// assistant turns starting with the user's, tool results as toolResult blocks of a user
// turn, and a toolConfig whenever the conversation holds tool blocks.
func (c *bedrockClient) input(req Request) (*bedrockruntime.ConverseInput, error) {
	if req.ResponseSchema != nil {
		// Converse as this adapter speaks it has no structured output: a caller forces a
		// tool call instead (SupportsResponseSchema says which to use).
		return nil, c.configError("bedrock_claude has no structured output (a response schema); force a tool call instead")
	}
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(c.model)}
	if req.System != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
	}
	hasToolBlocks := false
	for _, m := range req.Messages {
		role := types.ConversationRoleUser
		var blocks []types.ContentBlock
		switch m.Role {
		case RoleUser:
			blocks = append(blocks, &types.ContentBlockMemberText{Value: m.Content})
		case RoleAssistant:
			role = types.ConversationRoleAssistant
			if m.Content != "" {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: m.Content})
			}
			for _, tc := range m.ToolCalls {
				hasToolBlocks = true
				blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(tc.ID), Name: aws.String(tc.Name), Input: toolInput(tc.Arguments),
				}})
			}
		case RoleTool:
			hasToolBlocks = true
			blocks = append(blocks, toolResult(m))
		default:
			return nil, c.configError("a message has the unknown role " + string(m.Role))
		}
		in.Messages = appendTurn(in.Messages, role, blocks)
	}
	if len(in.Messages) == 0 || in.Messages[0].Role != types.ConversationRoleUser {
		opening := types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: bedrockOpening}}}
		in.Messages = append([]types.Message{opening}, in.Messages...)
	}
	if req.MaxTokens > 0 || req.Temperature != nil {
		in.InferenceConfig = &types.InferenceConfiguration{}
		if req.MaxTokens > 0 {
			in.InferenceConfig.MaxTokens = aws.Int32(int32(min(req.MaxTokens, 1<<31-1)))
		}
		if req.Temperature != nil {
			in.InferenceConfig.Temperature = aws.Float32(float32(*req.Temperature))
		}
	}
	tc, err := c.toolConfig(req, hasToolBlocks)
	in.ToolConfig = tc
	return in, err
}

// appendTurn adds blocks to the conversation: to the last turn when it is the same
// role's (a tool result and the user's next words are one user turn), else as a new turn.
func appendTurn(turns []types.Message, role types.ConversationRole, blocks []types.ContentBlock) []types.Message {
	if n := len(turns); n > 0 && turns[n-1].Role == role {
		turns[n-1].Content = append(turns[n-1].Content, blocks...)
		return turns
	}
	return append(turns, types.Message{Role: role, Content: blocks})
}

func toolResult(m Message) types.ContentBlock {
	content := m.Content
	if strings.TrimSpace(content) == "" {
		content = bedrockEmptyResult
	}
	status := types.ToolResultStatusSuccess
	if m.ToolError {
		status = types.ToolResultStatusError
	}
	return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String(m.ToolCallID),
		Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: content}},
		Status:    status,
	}}
}

// toolConfig offers the tools. Converse has no "none" choice: with mode none the tools
// are left out, unless the conversation already holds tool blocks, which Converse refuses
// without a toolConfig; then the model is offered them and may still call one.
func (c *bedrockClient) toolConfig(req Request, hasToolBlocks bool) (*types.ToolConfiguration, error) {
	if len(req.Tools) == 0 || (req.ToolChoice.Mode == "none" && !hasToolBlocks) {
		return nil, nil
	}
	tc := &types.ToolConfiguration{}
	for _, t := range req.Tools {
		spec := types.ToolSpecification{
			Name:        aws.String(t.Name),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: toolInputSchema(t.Parameters)},
		}
		if t.Description != "" {
			spec.Description = aws.String(t.Description)
		}
		tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: spec})
	}
	switch req.ToolChoice.Mode {
	case "": // Converse's default is auto
	case "auto", "none":
		tc.ToolChoice = &types.ToolChoiceMemberAuto{}
	case "required":
		tc.ToolChoice = &types.ToolChoiceMemberAny{}
	case "tool":
		tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(req.ToolChoice.Name)}}
	default:
		return nil, c.configError("unknown tool choice " + req.ToolChoice.Mode)
	}
	return tc, nil
}

// converseStream streams the reply: text deltas to onText, tool use blocks assembled from
// their start (id, name) and input deltas.
func (c *bedrockClient) converseStream(ctx context.Context, in *bedrockruntime.ConverseInput, onText func(string) error, start time.Time) (*Reply, error) {
	out, err := c.api.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
		ModelId: in.ModelId, Messages: in.Messages, System: in.System,
		InferenceConfig: in.InferenceConfig, ToolConfig: in.ToolConfig,
	})
	if err != nil {
		return nil, err
	}
	stream := out.GetStream()
	defer stream.Close()
	reply := &Reply{}
	var text strings.Builder
	calls := map[int32]*ToolCall{}
	var order []int32
	stopped := false
	first := func() {
		if reply.FirstToken == 0 {
			reply.FirstToken = time.Since(start)
		}
	}
	for event := range stream.Events() {
		switch e := event.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			if tu, ok := e.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				first()
				i := aws.ToInt32(e.Value.ContentBlockIndex)
				calls[i] = &ToolCall{ID: aws.ToString(tu.Value.ToolUseId), Name: aws.ToString(tu.Value.Name)}
				order = append(order, i)
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := e.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				first()
				text.WriteString(d.Value)
				if err := onText(d.Value); err != nil {
					return nil, &callbackError{err}
				}
			case *types.ContentBlockDeltaMemberToolUse:
				if call := calls[aws.ToInt32(e.Value.ContentBlockIndex)]; call != nil {
					call.Arguments += aws.ToString(d.Value.Input)
				}
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			stopped = true
			reply.StopReason = bedrockStopReason(e.Value.StopReason)
		case *types.ConverseStreamOutputMemberMetadata:
			reply.Usage = bedrockUsage(e.Value.Usage)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, bedrockStreamError(err)
	}
	if !stopped {
		return nil, &cutError{msg: "the stream was cut before the reply was complete"}
	}
	reply.Text = text.String()
	for _, i := range order {
		call := calls[i]
		reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: orNewCallID(call.ID), Name: call.Name, Arguments: argumentsOrEmpty(call.Arguments)})
	}
	return reply, nil
}
