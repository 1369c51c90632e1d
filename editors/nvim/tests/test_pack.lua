-- The plugin installed as the README says: a symlink in ~/.local/share/nvim/site/pack/rag/start, :helptags,
-- and the README's init.lua; Neovim starts without -u and nothing here touches the runtimepath. The plugin,
-- its commands, its help and its client come from the pack directory; then the README's "context source"
-- example ($RAG_NVIM_SNIPPET) runs against the real server.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

local function floats()
  local found = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      found[#found + 1] = win
    end
  end
  return found
end

T.run(function()
  -- Start-up loaded plugin/rag_lsp.lua from the pack directory (no :runtime, no :packadd here).
  T.set('loaded_flag', vim.g.loaded_rag_lsp == true)
  T.set('init_files', vim.api.nvim_get_runtime_file('lua/rag_lsp/init.lua', true))
  T.set('plugin_files', vim.api.nvim_get_runtime_file('plugin/rag_lsp.lua', true))
  local commands = vim.api.nvim_get_commands({})
  T.set('commands', vim.tbl_filter(function(name)
    return commands[name] ~= nil
  end, { 'RagContext', 'RagSymbol', 'RagStatus' }))
  local ok, rag = pcall(require, 'rag_lsp')
  T.expect(ok, "require('rag_lsp') failed", rag)
  T.set('module_api', type(rag.setup) == 'function' and type(rag.completion_context) == 'function')

  -- :help rag_lsp finds the help through the tags file the README's `helptags ALL` wrote.
  vim.cmd.help('rag_lsp')
  T.set('help_file', vim.api.nvim_buf_get_name(0))
  T.set('help_line', vim.api.nvim_get_current_line())
  vim.cmd.close()

  -- The README's init.lua called setup(): opening a file of the workspace starts and attaches the client.
  vim.cmd.edit('shop/ledger.py')
  local buf = vim.api.nvim_get_current_buf()
  local client = T.attached(buf)
  T.set('init_options', client.config.init_options)
  T.set('cmd', client.config.cmd)
  T.indexed(client)

  vim.cmd('RagStatus')
  local win = T.wait('the status float', function()
    return floats()[1]
  end)
  T.set('status_lines', vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false))
  vim.api.nvim_win_close(win, true)

  -- The README's example, run as written with the cursor inside `convert(` on line 14; its print()s are kept.
  local row = 14
  local col = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1]:find('convert(', 1, true) + 8
  vim.api.nvim_win_set_cursor(0, { row, col })
  local printed, notified = {}, {}
  local real_print, real_notify = print, vim.notify
  _G.print = function(...)
    printed[#printed + 1] = table.concat(vim.tbl_map(tostring, { ... }), ' ')
  end
  vim.notify = function(message)
    notified[#notified + 1] = message
  end
  local snippet_ok, snippet_err = pcall(dofile, vim.env.RAG_NVIM_SNIPPET)
  T.expect(snippet_ok, 'the README example failed', snippet_err)
  T.wait("the example's completion prompt and printed places", function()
    return (vim.b[buf].rag_prompt or #notified > 0) and (#printed > 0 or #notified > 0)
  end)
  _G.print, vim.notify = real_print, real_notify
  T.set('prompt', vim.b[buf].rag_prompt)
  T.set('printed', printed)
  T.set('notified', notified)
end, 60000)
