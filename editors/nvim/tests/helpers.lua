-- Test helpers for headless Neovim scenarios driven by tests/editors/test_nvim.py.
--
-- A scenario file calls T.run(function() ... end). The body runs in a coroutine resumed by timers, so
-- the editor's main loop keeps running between steps: typed keys (nvim_input) are processed, LSP
-- answers arrive, autocmds fire. The scenario ends by writing a JSON summary to $RAG_NVIM_RESULT and
-- exiting with :qa! (passed) or :cquit 1 (failed, timed out, or an error anywhere in the body).
local T = { values = {} }

local env = vim.env
T.plugin = assert(env.RAG_NVIM_PLUGIN, 'RAG_NVIM_PLUGIN is not set')
T.workspace = env.RAG_NVIM_WORKSPACE
T.server = env.RAG_NVIM_SERVER
T.server_log = env.RAG_NVIM_SERVER_LOG

local finished = false
local main_co

function T.note(message)
  io.stderr:write('[nvim-test] ' .. message .. '\n')
end

--- Record a value for the Python side to assert on.
function T.set(key, value)
  T.values[key] = value
end

--- Fail the scenario unless `cond`.
function T.expect(cond, message, detail)
  if not cond then
    error(message .. (detail ~= nil and (': ' .. vim.inspect(detail)) or ''), 2)
  end
  return cond
end

function T.finish(ok, err)
  if finished then
    return
  end
  finished = true
  if not ok then
    T.note('FAILED: ' .. tostring(err))
  end
  local summary = { ok = ok, error = err and tostring(err) or nil, values = T.values }
  local encoded_ok, encoded = pcall(vim.json.encode, summary)
  if not encoded_ok then
    encoded = vim.json.encode({ ok = false, error = 'summary not encodable: ' .. encoded })
    ok = false
  end
  if env.RAG_NVIM_RESULT then
    vim.fn.writefile({ encoded }, env.RAG_NVIM_RESULT)
  end
  vim.schedule(function()
    vim.cmd(ok and 'qa!' or 'cquit 1')
  end)
end

local function resume(co, ...)
  if finished or coroutine.status(co) == 'dead' then
    return
  end
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    T.finish(false, err)
  end
end

--- Run `body(T)` in a coroutine; fail if it takes more than `timeout_ms`.
function T.run(body, timeout_ms)
  timeout_ms = timeout_ms or 40000
  local timer = vim.defer_fn(function()
    T.finish(false, ('scenario timed out after %d ms'):format(timeout_ms))
  end, timeout_ms)
  main_co = coroutine.create(function()
    local ok, err = xpcall(body, debug.traceback, T)
    timer:stop()
    T.finish(ok, err)
  end)
  vim.schedule(function()
    resume(main_co)
  end)
end

--- Let the editor run for `ms` milliseconds.
function T.sleep(ms)
  local co = coroutine.running()
  vim.defer_fn(function()
    resume(co)
  end, ms)
  coroutine.yield()
end

--- Poll `fn` until it returns a truthy value (returned); fail after `timeout_ms`.
function T.wait(what, fn, timeout_ms)
  local deadline = vim.uv.now() + (timeout_ms or 15000)
  while true do
    local value = fn()
    if value then
      return value
    end
    if vim.uv.now() > deadline then
      error('timed out waiting for ' .. what, 2)
    end
    T.sleep(50)
  end
end

--- Call `start(done)` and wait until it calls done(...); returns done's arguments.
function T.await(what, start, timeout_ms)
  local co = coroutine.running()
  local results, timed_out
  start(function(...)
    if results or timed_out then
      return
    end
    results = { n = select('#', ...), ... }
    vim.schedule(function()
      resume(co)
    end)
  end)
  vim.defer_fn(function()
    if not results then
      timed_out = true
      resume(co)
    end
  end, timeout_ms or 15000)
  coroutine.yield()
  if timed_out then
    error('timed out waiting for ' .. what, 2)
  end
  return unpack(results, 1, results.n)
end

--- A request to the server; returns err, result.
function T.request(client, method, params, bufnr)
  return T.await(method, function(done)
    client:request(method, params, function(err, result)
      done(err, result)
    end, bufnr)
  end)
end

--- Put the plugin on the runtimepath, load it and call setup with the test server (plus `opts`).
function T.bootstrap(opts)
  vim.opt.rtp:prepend(T.plugin)
  vim.cmd('filetype on')
  vim.cmd('runtime plugin/rag_lsp.lua')
  if T.workspace then
    vim.cmd.cd(vim.fn.fnameescape(T.workspace))
  end
  local cmd = { T.server, 'serve' }
  if T.server_log then
    vim.list_extend(cmd, { '--log-file', T.server_log })
  end
  require('rag_lsp').setup(vim.tbl_deep_extend('force', { cmd = cmd }, opts or {}))
end

--- Edit a workspace file; returns its buffer.
function T.open(relative)
  vim.cmd.edit(vim.fn.fnameescape(vim.fs.joinpath(T.workspace, relative)))
  return vim.api.nvim_get_current_buf()
end

--- Wait until a rag_lsp client is attached to `bufnr` and initialized.
function T.attached(bufnr)
  return T.wait('a rag_lsp client attached to buffer ' .. bufnr, function()
    local client = require('rag_lsp').get_client(bufnr)
    return client and client.initialized and client
  end, 20000)
end

--- Wait until the server's initial indexing is done; returns the ragLsp/status result.
function T.indexed(client)
  local status
  T.wait('indexing to finish', function()
    local err, result = T.request(client, 'ragLsp/status', vim.empty_dict())
    T.expect(not err, 'ragLsp/status failed', err)
    status = result
    local indexing = result.indexing or {}
    return indexing.total and indexing.total > 0 and indexing.done == indexing.total and not indexing.running
  end, 20000)
  return status
end

--- The quickfix list: { title, items = { { file = path relative to the workspace, lnum, text } } }.
function T.quickfix()
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  local items = {}
  for _, item in ipairs(qf.items) do
    local name = vim.fs.normalize(vim.api.nvim_buf_get_name(item.bufnr))
    local root = vim.fs.normalize(T.workspace or '')
    if name:sub(1, #root + 1) == root .. '/' then
      name = name:sub(#root + 2)
    end
    items[#items + 1] = { file = name, lnum = item.lnum, end_lnum = item.end_lnum, text = item.text }
  end
  return { title = qf.title, items = items }
end

--- Wait until the quickfix title starts with `prefix` (the answer to a command arrived).
function T.quickfix_for(prefix)
  return T.wait('a quickfix list titled ' .. prefix, function()
    local qf = T.quickfix()
    return vim.startswith(qf.title, prefix) and qf
  end, 15000)
end

--- The resolved code lenses of a buffer: { { line (1-based), title } }, sorted by line.
function T.lenses(bufnr)
  local lenses = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    if lens.command and lens.command.title then
      lenses[#lenses + 1] = { line = lens.range.start.line + 1, title = lens.command.title }
    end
  end
  table.sort(lenses, function(a, b)
    return a.line < b.line
  end)
  return lenses
end

--- The text of the code-lens virtual text shown on a buffer line (1-based), or nil.
function T.lens_text(bufnr, line)
  for _, ns in pairs(vim.api.nvim_get_namespaces()) do
    local marks = vim.api.nvim_buf_get_extmarks(bufnr, ns, { line - 1, 0 }, { line - 1, -1 }, { details = true })
    for _, mark in ipairs(marks) do
      local chunks = mark[4].virt_text
      if chunks then
        return table.concat(vim.tbl_map(function(c)
          return c[1]
        end, chunks))
      end
    end
  end
  return nil
end

--- Type keys as a user would (processed by the main loop); wait until `done()` holds.
function T.type(keys, what, done)
  vim.api.nvim_input(keys)
  return T.wait(what, done, 10000)
end

--- The processes Neovim started (the language server among them).
function T.children()
  return vim.api.nvim_get_proc_children(vim.fn.getpid())
end

return T
