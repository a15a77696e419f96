const express = require("express");
import fs from "fs";

class Server {
  listen() {}
}

export default function start(port) {
  return new Server().listen(port);
}

const stop = () => {};
  function nested() {}
