--- Options of the plugin and the vim.lsp config built from them.
local M = {}

--- The name of the LSP config (`vim.lsp.config.rag_lsp`, `vim.lsp.enable('rag_lsp')`) and of its clients.
M.name = 'rag_lsp'

M.methods = {
  context = 'ragLsp/context',
  status = 'ragLsp/status',
  completion_context = 'ragLsp/completionContext',
  lens_refresh = 'workspace/codeLens/refresh',
  execute_command = 'workspace/executeCommand',
}

--- Server command ids (the server's own commands start with `ragLsp.server.`).
M.commands = {
  context_for_symbol = 'ragLsp.server.contextForSymbol',
}

M.defaults = {
  -- The server command; a string is the path of the `rag-lsp` executable.
  cmd = { 'rag-lsp', 'serve' },
  filetypes = {
    'python', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go', 'rust', 'java',
    'c', 'cpp', 'ruby', 'markdown', 'rst',
  },
  -- Searched upwards from the buffer; without a marker the current directory is the root when the file is
  -- under it, else the file's directory.
  root_markers = { '.rag-lsp.toml', '.git' },
  -- Server settings (docs/protocol.md): budgetTokens, topK, ignore, languages, cacheDir, maxFileBytes,
  -- languageServers, languageServerTimeoutMs, languageServerCalls.
  settings = {},
  codelens = true, -- show code lenses and refresh them on attach, BufEnter, InsertLeave and server request
  open_quickfix = true, -- :copen after :RagContext / :RagSymbol / a lens
  scratch = false, -- also show the readable block in a scratch buffer (always with :RagContext!)
  status = 'float', -- :RagStatus in a 'float' or 'echo'
  enable = true, -- call vim.lsp.enable() in setup()
  on_attach = nil, -- function(client, bufnr), called after the plugin's own
  lsp = {}, -- extra vim.lsp.Config fields (cmd_env, capabilities, ...)
}

M.options = vim.deepcopy(M.defaults)

--- Merge user options over the defaults (lists replace, tables merge).
function M.set(opts)
  vim.validate('opts', opts, 'table', true)
  opts = opts or {}
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  if type(merged.cmd) == 'string' then
    merged.cmd = { merged.cmd, 'serve' }
  end
  vim.validate('cmd', merged.cmd, 'table')
  vim.validate('filetypes', merged.filetypes, 'table')
  vim.validate('root_markers', merged.root_markers, 'table')
  vim.validate('settings', merged.settings, 'table')
  vim.validate('on_attach', merged.on_attach, 'function', true)
  vim.validate('status', merged.status, function(v)
    return v == 'float' or v == 'echo'
  end, "'float' or 'echo'")
  M.options = merged
  return merged
end

--- The workspace root for a buffer: the nearest root marker, else the working directory when the file is
--- inside it, else the file's directory.
function M.find_root(bufnr, markers)
  local root = vim.fs.root(bufnr, markers)
  if root then
    return root
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return nil
  end
  name = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  if name:sub(1, #cwd + 1) == (cwd == '/' and '/' or cwd .. '/') then
    return cwd
  end
  return vim.fs.dirname(name)
end

--- A settings table as JSON wants it: nil when empty (an empty Lua table would encode as a list).
local function object_or_nil(tbl)
  return (tbl and next(tbl)) and tbl or nil
end

--- The vim.lsp.Config for the current options.
function M.lsp_config()
  local opts = M.options
  local lens = require('rag_lsp.lens')
  local base = {
    cmd = opts.cmd,
    filetypes = opts.filetypes,
    root_dir = function(bufnr, on_dir)
      local root = M.find_root(bufnr, M.options.root_markers)
      if root then
        on_dir(root)
      end
    end,
    init_options = object_or_nil(opts.settings),
    settings = vim.deepcopy(opts.settings),
    capabilities = { workspace = { codeLens = { refreshSupport = true } } },
    handlers = { [M.methods.lens_refresh] = lens.on_refresh },
    commands = { [M.commands.context_for_symbol] = lens.run_command },
    on_attach = function(client, bufnr)
      if M.options.codelens then
        lens.attach(client, bufnr)
      end
      if M.options.on_attach then
        M.options.on_attach(client, bufnr)
      end
    end,
  }
  return vim.tbl_deep_extend('force', base, opts.lsp or {})
end

return M
