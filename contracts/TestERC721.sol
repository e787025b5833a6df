// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// ERC-721 for tests and benches: anyone may mint and burn, and the token URI is settable
/// (a base URI for every token, or an explicit URI per token that wins over the base).
contract TestERC721 is ERC721 {
    string private baseUri;
    mapping(uint256 => string) private explicitUris;

    constructor(string memory name_, string memory symbol_, string memory baseUri_) ERC721(name_, symbol_) {
        baseUri = baseUri_;
    }

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }

    /// One token per recipient, ids firstId, firstId + 1, ...: many Transfer logs in one
    /// transaction, so a bench can fill blocks cheaply (no receiver check, unlike _safeMint).
    function mintMany(address[] calldata to, uint256 firstId) external {
        for (uint256 i = 0; i < to.length; i++) {
            _mint(to[i], firstId + i);
        }
    }

    /// Moves many tokens in one transaction (the caller must own or be approved for each).
    function transferMany(address[] calldata from, address[] calldata to, uint256[] calldata tokenIds) external {
        require(from.length == to.length && to.length == tokenIds.length, "length mismatch");
        for (uint256 i = 0; i < tokenIds.length; i++) {
            transferFrom(from[i], to[i], tokenIds[i]);
        }
    }

    function burn(uint256 tokenId) external {
        _burn(tokenId);
    }

    function setBaseURI(string calldata baseUri_) external {
        baseUri = baseUri_;
    }

    function setTokenURI(uint256 tokenId, string calldata uri) external {
        explicitUris[tokenId] = uri;
    }

    function tokenURI(uint256 tokenId) public view override returns (string memory) {
        _requireOwned(tokenId);
        string memory explicitUri = explicitUris[tokenId];
        if (bytes(explicitUri).length > 0) {
            return explicitUri;
        }
        return bytes(baseUri).length > 0 ? string.concat(baseUri, Strings.toString(tokenId)) : "";
    }
}
