-- :RagPrompt puts the server's prompt block in the unnamed register.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  T.bootstrap()
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.indexed(client)
  vim.fn.setreg('"', '')
  vim.cmd('RagPrompt why does Ledger.post raise KeyError')
  local block = T.wait('the prompt block in the unnamed register', function()
    local text = vim.fn.getreg('"')
    return text ~= '' and text
  end)
  T.set('register', block)
end)
