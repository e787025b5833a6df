// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// ERC-721 for tests whose tokenURI can be made huge: a token given a size answers a string of
/// that many zero bytes, built in place (no copy, no loop), so the answer costs only its memory.
/// Reading one of tens of MiB needs a node whose call gas limit allows it (anvil --gas-limit).
contract TestHugeUriERC721 is ERC721 {
    mapping(uint256 => string) private explicitUris;
    mapping(uint256 => uint256) private hugeSizes;

    constructor() ERC721("Huge URI", "HUGE") {}

    /// One token per recipient, ids firstId, firstId + 1, ...: several tokens in one block.
    function mintMany(address[] calldata to, uint256 firstId) external {
        for (uint256 i = 0; i < to.length; i++) {
            _mint(to[i], firstId + i);
        }
    }

    function setTokenURI(uint256 tokenId, string calldata uri) external {
        explicitUris[tokenId] = uri;
    }

    /// From now on tokenURI(tokenId) answers `size` zero bytes.
    function setHugeURI(uint256 tokenId, uint256 size) external {
        hugeSizes[tokenId] = size;
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        uint256 size = hugeSizes[tokenId];
        if (size == 0) {
            return explicitUris[tokenId];
        }
        assembly {
            // The ABI encoding of one string: offset, length, the bytes padded to 32. Memory past
            // the free pointer is still zero, so the bytes need no writing.
            let ptr := mload(0x40)
            mstore(ptr, 0x20)
            mstore(add(ptr, 0x20), size)
            return(ptr, add(0x40, mul(div(add(size, 31), 32), 32)))
        }
    }
}
