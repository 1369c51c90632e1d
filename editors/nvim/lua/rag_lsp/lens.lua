--- Code lenses: refreshed on attach, BufEnter, InsertLeave and when the server asks
--- (workspace/codeLens/refresh); running one shows the context for its symbol like :RagContext.
local M = {}

--- bufnr -> number of the latest lens request; older answers are dropped.
local generation = {}

--- Ask the rag_lsp clients of `bufnr` for its lenses and hand the answer to Neovim's code-lens handler
--- (which stores, resolves and displays them). Unlike vim.lsp.codelens.refresh(), a refresh is never
--- skipped because an earlier one is still running: the server's refresh after indexing must win over
--- the lenses asked for while it was indexing.
local function refresh(bufnr)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local codelens = vim.lsp.codelens
  if not codelens.on_codelens then
    codelens.refresh({ bufnr = bufnr })
    return
  end
  local current = (generation[bufnr] or 0) + 1
  generation[bufnr] = current
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  for _, client in ipairs(vim.lsp.get_clients({ name = require('rag_lsp.config').name, bufnr = bufnr })) do
    client:request('textDocument/codeLens', params, function(err, result, ctx)
      if generation[bufnr] == current and vim.api.nvim_buf_is_loaded(bufnr) then
        codelens.on_codelens(err, result, ctx)
      end
    end, bufnr)
  end
end
M.refresh = refresh

--- Start showing lenses in a buffer the client attached to.
function M.attach(client, bufnr)
  local group = vim.api.nvim_create_augroup('rag_lsp.lens.' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave' }, {
    group = group,
    buffer = bufnr,
    desc = 'rag_lsp: refresh code lenses',
    callback = function(args)
      refresh(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd('LspDetach', {
    group = group,
    buffer = bufnr,
    callback = function(args)
      if args.data and args.data.client_id == client.id then
        generation[bufnr] = nil
        pcall(vim.api.nvim_del_augroup_by_id, group)
      end
    end,
  })
  refresh(bufnr)
end

--- How many workspace/codeLens/refresh requests the server sent (for :lua =require('rag_lsp.lens').server_refreshes).
M.server_refreshes = 0

--- Handler of the server's workspace/codeLens/refresh request: refresh every buffer of that client.
function M.on_refresh(_, _, ctx)
  M.server_refreshes = M.server_refreshes + 1
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if client then
    for bufnr in pairs(client.attached_buffers) do
      refresh(bufnr)
    end
  end
  return vim.NIL
end

--- Client-side handler of the lens command `ragLsp.server.contextForSymbol`: ask the server to run it
--- (workspace/executeCommand) and show the answer like :RagContext.
function M.run_command(command, ctx)
  local config = require('rag_lsp.config')
  local ui = require('rag_lsp.ui')
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return
  end
  local target = (command.arguments or {})[1] or {}
  local title = 'RagSymbol ' .. tostring(target.qualname or target.name or '?')
  client:request(config.methods.execute_command, {
    command = command.command,
    arguments = command.arguments,
  }, function(err, result)
    if err then
      ui.error(title, err)
    elseif result then
      ui.present(title, result)
    end
  end, ctx.bufnr)
end

return M
