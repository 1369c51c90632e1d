-- require('rag_lsp').completion_context() calls back with a prompt and items: from
-- ragLsp/completionContext when the server has it, else from ragLsp/context with the cursor as focus.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

local function paths(items)
  local out = {}
  for _, item in ipairs(items or {}) do
    out[#out + 1] = tostring(item.path or item.uri)
  end
  return out
end

T.run(function()
  T.bootstrap()
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.indexed(client)
  local rag = require('rag_lsp')

  -- The cursor inside `convert` in `account.append(convert(entry.amount, entry.currency))`.
  local row = 14
  local text = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1]
  local col = text:find('convert', 1, true) + 1
  vim.api.nvim_win_set_cursor(0, { row, col })

  local started = vim.uv.hrtime()
  local result, err = T.await('completion_context at the cursor', function(done)
    rag.completion_context(buf, nil, done, { timeout_ms = 10000 })
  end)
  T.expect(result, 'completion_context failed', err)
  T.set('elapsed_ms', (vim.uv.hrtime() - started) / 1e6)
  T.set('source', result.source)
  T.set('fallback', result.fallback == true)
  T.set('prompt', result.prompt)
  T.set('paths', paths(result.items))

  -- A { row, col } position and an LSP position; at most maxSnippets places.
  local limited = T.await('completion_context with maxSnippets', function(done)
    rag.completion_context(buf, { row, col }, done, { maxSnippets = 1, budgetTokens = 300, timeout_ms = 10000 })
  end)
  T.set('limited_count', #limited.items)
  local by_lsp = T.await('completion_context at an LSP position', function(done)
    rag.completion_context(buf, { line = row - 1, character = col }, done, { timeout_ms = 10000 })
  end)
  T.set('lsp_position_paths', paths(by_lsp.items))

  -- A buffer without a client calls back with an error, at once.
  local scratch = vim.api.nvim_create_buf(false, true)
  local none, none_err = T.await('completion_context without a client', function(done)
    rag.completion_context(scratch, { 1, 0 }, done)
  end)
  T.set('no_client_result', none == nil)
  T.set('no_client_error', none_err)
end)
