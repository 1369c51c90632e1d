-- The scene for the README screenshot, run in a real terminal (tmux) by tests/editors/test_nvim.py:
-- shop/ledger.py with its code lenses and the answer of :RagContext in the quickfix window. Writes the
-- values to $RAG_NVIM_READY when the screen is ready, then waits for $RAG_NVIM_CAPTURED and quits.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  vim.o.termguicolors = true
  vim.o.background = 'dark'
  vim.o.number = true
  vim.o.laststatus = 2
  vim.o.showmode = false
  vim.cmd('syntax on')
  vim.cmd('filetype plugin on') -- the quickfix window's status line shows the list's title
  T.bootstrap()
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.indexed(client)
  T.wait('the lens above `def post` with its final counts', function()
    return T.lens_text(buf, 11) == '1 reference · 1 test · context'
  end)
  vim.api.nvim_win_set_cursor(0, { 11, 8 })
  vim.cmd('RagContext why does Ledger.post raise KeyError')
  T.set('quickfix', T.quickfix_for('RagContext why does Ledger.post raise KeyError'))
  vim.cmd('echo ":RagContext why does Ledger.post raise KeyError"')
  vim.cmd('redraw!')
  T.sleep(300)
  vim.fn.writefile({ vim.json.encode(T.values) }, vim.env.RAG_NVIM_READY)
  T.wait('the capture', function()
    return vim.uv.fs_stat(vim.env.RAG_NVIM_CAPTURED) ~= nil
  end, 30000)
end, 60000)
