--- rag_lsp for Neovim: ranked code context from the rag-lsp language server.
---
--- Public API (see :help rag_lsp):
---   setup(opts)                                     configure and enable the client
---   update_settings(settings)                       send new server settings to running clients
---   ask(question, opts)                             :RagContext
---   prompt(question, opts)                          :RagPrompt
---   symbol(opts)                                    :RagSymbol
---   status(opts)                                    :RagStatus
---   context(params, callback, opts)                 ragLsp/context, raw
---   completion_context(bufnr, pos, callback, opts)  context for LLM completion plugins
---   get_client(bufnr, any)                          the rag_lsp client for a buffer
local config = require('rag_lsp.config')
local render = require('rag_lsp.render')

local M = {}

M.methods = config.methods

local function ui()
  return require('rag_lsp.ui')
end

local METHOD_NOT_FOUND = -32601

local function resolve_bufnr(bufnr)
  if bufnr == nil or bufnr == 0 then
    return vim.api.nvim_get_current_buf()
  end
  return bufnr
end

--- Configure the `rag_lsp` LSP client (vim.lsp.config) and enable it (vim.lsp.enable).
--- Calling it again replaces the options and sends the new settings to running clients.
function M.setup(opts)
  local options = config.set(opts)
  vim.lsp.config[config.name] = config.lsp_config()
  if vim.fn.executable(options.cmd[1]) == 0 then
    ui().notify(
      ('the server command %q is not executable; install rag_lsp and pass setup{ cmd = { "/path/to/rag-lsp", "serve" } } (see :help rag_lsp-install)'):format(
        options.cmd[1]
      ),
      vim.log.levels.WARN
    )
  end
  if options.enable then
    vim.lsp.enable(config.name)
  end
  for _, client in ipairs(vim.lsp.get_clients({ name = config.name })) do
    M._send_settings(client, options.settings)
  end
end

function M._send_settings(client, settings)
  client.settings = vim.deepcopy(settings)
  client:notify('workspace/didChangeConfiguration', {
    settings = next(settings) and settings or vim.empty_dict(),
  })
end

--- Merge `settings` into the server settings and send them (workspace/didChangeConfiguration) to every
--- running client; new clients get them as initializationOptions.
function M.update_settings(settings)
  vim.validate('settings', settings, 'table')
  local merged = vim.tbl_deep_extend('force', config.options.settings, settings)
  config.options.settings = merged
  vim.lsp.config[config.name] = config.lsp_config()
  for _, client in ipairs(vim.lsp.get_clients({ name = config.name })) do
    M._send_settings(client, merged)
  end
end

--- The rag_lsp client attached to `bufnr`; with `any`, else any running rag_lsp client.
function M.get_client(bufnr, any)
  bufnr = resolve_bufnr(bufnr or 0)
  local client = vim.lsp.get_clients({ name = config.name, bufnr = bufnr })[1]
  if client or not any then
    return client
  end
  return vim.lsp.get_clients({ name = config.name })[1]
end

local function no_client(bufnr)
  return ('no rag-lsp client is running for buffer %d (open a file of a configured filetype; is setup() called? see :checkhealth rag_lsp)'):format(
    bufnr
  )
end

--- Send `ragLsp/context` with `params` (docs/protocol.md); callback(err, result).
--- opts.bufnr: the buffer whose client to use (and, when it is attached, the focus of the question).
function M.context(params, callback, opts)
  opts = opts or {}
  local bufnr = resolve_bufnr(opts.bufnr or 0)
  local client = M.get_client(bufnr, true)
  if not client then
    callback(no_client(bufnr), nil)
    return
  end
  params = vim.deepcopy(params)
  if not params.textDocument and client.attached_buffers[bufnr] then
    params.textDocument = { uri = vim.uri_from_bufnr(bufnr) }
  end
  client:request(config.methods.context, params, function(err, result)
    callback(err, result)
  end, bufnr)
end

--- :RagContext — ask a question; the answer goes to the quickfix list (and the scratch buffer when
--- opts.scratch or the `scratch` option). opts: scratch, topK, budgetTokens, evidence, bufnr, callback.
function M.ask(question, opts)
  opts = opts or {}
  if not question or vim.trim(question) == '' then
    vim.ui.input({ prompt = 'RAG question: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        M.ask(input, opts)
      end
    end)
    return
  end
  local title = 'RagContext ' .. question
  M.context({
    query = question,
    evidence = opts.evidence,
    topK = opts.topK,
    budgetTokens = opts.budgetTokens,
  }, function(err, result)
    if err then
      ui().error(title, err)
    else
      ui().present(title, result, { scratch = opts.scratch })
    end
    if opts.callback then
      opts.callback(err, result)
    end
  end, { bufnr = opts.bufnr })
end

--- :RagPrompt — ask a question and put the server's prompt block (ragLsp/context with format = 'prompt':
--- the places with their reasons, then the bundle; the same answer gives the same bytes) in the unnamed
--- register, and in `+` when Neovim has a clipboard. opts: topK, budgetTokens, evidence, bufnr, callback.
function M.prompt(question, opts)
  opts = opts or {}
  if not question or vim.trim(question) == '' then
    vim.ui.input({ prompt = 'RAG question: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        M.prompt(input, opts)
      end
    end)
    return
  end
  local title = 'RagPrompt ' .. question
  M.context({
    query = question,
    evidence = opts.evidence,
    topK = opts.topK,
    budgetTokens = opts.budgetTokens,
    format = 'prompt',
  }, function(err, result)
    local block = result and render.val(result.prompt)
    if err or not block then
      ui().error(title, err or 'the server sent no prompt block (is it older than format = "prompt"?)')
    else
      vim.fn.setreg('"', block)
      if vim.fn.has('clipboard') == 1 then
        pcall(vim.fn.setreg, '+', block)
      end
      ui().notify(('prompt block copied: %s'):format(render.summary(result)), vim.log.levels.INFO)
    end
    if opts.callback then
      opts.callback(err, result)
    end
  end, { bufnr = opts.bufnr })
end

--- :RagSymbol — context for the symbol under the cursor (ragLsp/context with the cursor position and
--- an empty query: the server asks about the identifier and its enclosing definition).
function M.symbol(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get_client(bufnr)
  if not client then
    ui().notify(no_client(bufnr), vim.log.levels.ERROR)
    return
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.query = ''
  local title = 'RagSymbol ' .. vim.fn.expand('<cword>')
  client:request(config.methods.context, params, function(err, result)
    if err then
      ui().error(title, err)
    else
      ui().present(title, result, { scratch = opts.scratch })
    end
    if opts.callback then
      opts.callback(err, result)
    end
  end, bufnr)
end

--- :RagStatus — the index's state in a float (or echoed: opts.style = 'echo').
function M.status(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get_client(bufnr, true)
  if not client then
    ui().notify(no_client(bufnr), vim.log.levels.ERROR)
    return
  end
  -- An empty object rather than no params: rag-lsp 0.1.0 never answers a request without "params".
  client:request(config.methods.status, vim.empty_dict(), function(err, result)
    if err then
      ui().error('RagStatus', err)
    else
      ui().status(result, opts.style)
    end
    if opts.callback then
      opts.callback(err, result)
    end
  end, bufnr)
end

--- The LSP position for `pos`: nil (the cursor, when `bufnr` is the current buffer), `{ row, col }` as
--- from nvim_win_get_cursor (1-based row, 0-based byte column), or an LSP position `{ line, character }`.
local function lsp_position(bufnr, pos, encoding)
  if type(pos) == 'table' and pos.line ~= nil then
    return { line = pos.line, character = pos.character or 0 }
  end
  if pos == nil then
    local win = bufnr == vim.api.nvim_get_current_buf() and 0 or vim.fn.bufwinid(bufnr)
    if win == -1 then
      return nil
    end
    pos = vim.api.nvim_win_get_cursor(win)
  end
  local row, col = pos[1], pos[2]
  local text = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ''
  col = math.max(0, math.min(col, #text))
  return { line = row - 1, character = vim.str_utfindex(text, encoding or 'utf-16', col, false) }
end

--- Clients known not to have ragLsp/completionContext.
local no_completion_method = {}

--- Context for an LLM completion at `pos` in `bufnr`; calls `callback(result, err)` once.
---
--- Sends `ragLsp/completionContext` (`{ textDocument, position, budgetTokens?, maxSnippets? }`); its
--- result is passed on with `items` (= its `items` or `snippets`), `prompt` and `elapsed_ms`. When the
--- server answers MethodNotFound (an older server), falls back to `ragLsp/context` with the position as
--- the focus and an empty query, and calls back with `{ prompt = <the readable block>, items = ...,
--- elapsed_ms = ..., fallback = true }`. `result.source` names the method that answered.
---
--- opts: budgetTokens, maxSnippets, timeout_ms (callback(nil, 'timeout') after it; default 2000).
function M.completion_context(bufnr, pos, callback, opts)
  vim.validate('callback', callback, 'function')
  opts = opts or {}
  bufnr = resolve_bufnr(bufnr or 0)
  local client = M.get_client(bufnr)
  if not client then
    callback(nil, no_client(bufnr))
    return
  end
  local done = false
  local function finish(result, err)
    if not done then
      done = true
      callback(result, err)
    end
  end
  local position = lsp_position(bufnr, pos, client.offset_encoding)
  if not position then
    callback(nil, ('no position given and buffer %d is in no window'):format(bufnr))
    return
  end
  local base = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = position }

  local function fallback()
    local params = vim.tbl_extend('force', base, {
      query = '',
      budgetTokens = opts.budgetTokens,
      topK = opts.maxSnippets,
    })
    local _, id = client:request(config.methods.context, params, function(err, result)
      if err then
        finish(nil, err)
        return
      end
      finish({
        prompt = table.concat(render.block(result, { footer = false }), '\n'),
        items = result.items,
        elapsed_ms = result.elapsed_ms,
        fallback = true,
        source = config.methods.context,
        context = result,
      })
    end, bufnr)
    return id
  end

  local request_id
  if no_completion_method[client.id] then
    request_id = fallback()
  else
    local params = vim.tbl_extend('force', base, {
      budgetTokens = opts.budgetTokens,
      maxSnippets = opts.maxSnippets,
    })
    _, request_id = client:request(config.methods.completion_context, params, function(err, result)
      if err and err.code == METHOD_NOT_FOUND then
        no_completion_method[client.id] = true
        request_id = fallback()
      elseif err then
        finish(nil, err)
      else
        result = result or {}
        result.items = result.items or result.snippets or {}
        result.source = config.methods.completion_context
        finish(result)
      end
    end, bufnr)
  end
  vim.defer_fn(function()
    if not done then
      if request_id then
        client:cancel_request(request_id)
      end
      finish(nil, 'timeout')
    end
  end, opts.timeout_ms or 2000)
end

return M
