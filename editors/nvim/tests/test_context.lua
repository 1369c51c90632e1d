-- :RagContext fills the quickfix list (file, line, symbol and why in the text); :RagContext! also shows
-- the readable block in a scratch buffer, where <CR> opens the place under the cursor.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  T.bootstrap()
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.indexed(client)
  local source_win = vim.api.nvim_get_current_win()

  vim.cmd('RagContext why does Ledger.post raise KeyError')
  local qf = T.quickfix_for('RagContext why does Ledger.post raise KeyError')
  T.set('quickfix', qf)
  T.expect(#qf.items > 0, 'the quickfix list is empty', qf)
  T.expect(qf.items[1].file == 'shop/ledger.py', 'the first place is not shop/ledger.py', qf.items[1])
  T.set('quickfix_window_open', vim.fn.getqflist({ winid = 1 }).winid ~= 0)
  T.set('focus_stayed', vim.api.nvim_get_current_win() == source_win)

  vim.cmd('RagContext! where is the rate limit configured')
  T.quickfix_for('RagContext where is the rate limit configured')
  local scratch = T.wait('the scratch buffer', function()
    local b = vim.fn.bufnr('rag-lsp://context')
    return b > 0 and vim.fn.bufwinid(b) ~= -1 and b
  end)
  local lines = vim.api.nvim_buf_get_lines(scratch, 0, -1, false)
  T.set('scratch_lines', lines)
  T.set('scratch_filetype', vim.bo[scratch].filetype)
  T.set('scratch_modifiable', vim.bo[scratch].modifiable)

  -- <CR> on a line of the first place opens that place in the previous window.
  local header
  for i, line in ipairs(lines) do
    if line:match('^1%. ') then
      header = i
    end
  end
  T.expect(header, 'no first place in the scratch buffer', lines)
  vim.api.nvim_set_current_win(vim.fn.bufwinid(scratch))
  vim.api.nvim_win_set_cursor(0, { header + 1, 0 })
  local opened = T.type('<CR>', 'the place to open', function()
    local name = vim.api.nvim_buf_get_name(0)
    return name:match('shop/limits%.py$') and name
  end)
  T.set('jumped_to', { file = vim.fn.fnamemodify(opened, ':t'), line = vim.api.nvim_win_get_cursor(0)[1] })
end)
